/**
 * The HTTP API's JSON shapes, as the berth server (and Nomad) answers them: PascalCase fields,
 * durations and `*Time` fields in nanoseconds unless noted. These are the API's own DTOs, kept apart
 * from src/structs on purpose: a client must not depend on the server's domain code. Enumerated
 * values are typed as `string` (with the known values documented) so a newer server's value never
 * breaks an older client.
 */

// One file per resource; this barrel keeps every importer's `./types.js` path.
export type * from "./types_job.js";
export type * from "./types_alloc.js";
export type * from "./types_node.js";
export type * from "./types_volume.js";
export type * from "./types_volume_create.js";
export type * from "./types_plugin.js";
export type * from "./types_operator.js";
export type * from "./types_update.js";
export type * from "./types_deployment.js";
export type * from "./types_validate.js";
export type * from "./types_plan.js";
export type * from "./types_namespace.js";
export type * from "./types_acl.js";
export type * from "./types_status.js";
