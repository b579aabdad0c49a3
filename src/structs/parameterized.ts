/**
 * Parameterized jobs as Nomad's (structs.ParameterizedJobConfig, nomad/job_endpoint.go Dispatch):
 * the `parameterized` block, a dispatch request's checks (word for word Nomad's, each naming the
 * field it is about), the dispatched child's ID and record. Pure.
 */
import { validationError } from "./errors.js";
import type { Job } from "./job.js";
import type { DispatchPayloadRule, ParameterizedJobConfig } from "./job_stanzas.js";
import { asObject, optString, optStringArray } from "./json_check.js";

/** Nomad's DispatchPayloadSizeLimit: 16 KiB, before encoding. */
export const DISPATCH_PAYLOAD_SIZE_LIMIT = 16 * 1024;

/** Nomad's structs.DispatchLaunchSuffix. */
export const DISPATCH_LAUNCH_SUFFIX = "/dispatch-";

const FIELDS = new Set(["Payload", "MetaRequired", "MetaOptional"]);
const RULES: readonly DispatchPayloadRule[] = ["optional", "required", "forbidden"];

/** Canonicalized (Payload "optional" by default) and validated as Nomad's. */
export function validateParameterized(field: string, input: unknown): ParameterizedJobConfig {
  const p = asObject(field, input);
  for (const k of Object.keys(p)) {
    if (!FIELDS.has(k)) throw validationError(`${field}.${k}`, "unknown field");
  }
  const payload = optString(`${field}.Payload`, p.Payload, "") || "optional";
  if (!(RULES as readonly string[]).includes(payload))
    throw validationError(`${field}.Payload`, `Unknown payload requirement: ${JSON.stringify(payload)}`);
  const MetaRequired = optStringArray(`${field}.MetaRequired`, p.MetaRequired, []);
  const MetaOptional = optStringArray(`${field}.MetaOptional`, p.MetaOptional, []);
  const both = MetaRequired.filter((k) => MetaOptional.includes(k));
  if (both.length > 0) {
    throw validationError(
      `${field}.MetaOptional`,
      `Required and optional meta keys should be disjoint. Following keys exist in both: [${both.join(" ")}]`,
    );
  }
  return { Payload: payload as DispatchPayloadRule, MetaRequired, MetaOptional };
}

/** Whether the job is a parameterized parent (a dispatched child is not: Nomad's IsParameterized). */
export function isParameterized(job: Pick<Job, "ParameterizedJob" | "Dispatched">): boolean {
  return job.ParameterizedJob != null && job.Dispatched !== true;
}

/** A dispatch request's checks, in Nomad's order (validateDispatchRequest). */
export function checkDispatch(
  cfg: ParameterizedJobConfig,
  payload: Buffer,
  meta: Record<string, string>,
): void {
  const has = payload.length > 0;
  if (cfg.Payload === "required" && !has)
    throw validationError("Payload", "Payload is not provided but required by parameterized job");
  if (cfg.Payload === "forbidden" && has)
    throw validationError("Payload", "Payload provided but forbidden by parameterized job");
  if (payload.length > DISPATCH_PAYLOAD_SIZE_LIMIT) {
    throw validationError(
      "Payload",
      `Payload exceeds maximum size; ${payload.length} > ${DISPATCH_PAYLOAD_SIZE_LIMIT}`,
    );
  }
  const allowed = new Set([...cfg.MetaRequired, ...cfg.MetaOptional]);
  const unpermitted = Object.keys(meta).filter((k) => !allowed.has(k));
  if (unpermitted.length > 0) {
    throw validationError(
      "Meta",
      `Dispatch request included unpermitted metadata keys: [${unpermitted.sort().join(" ")}]`,
    );
  }
  const missing = cfg.MetaRequired.filter((k) => !(k in meta));
  if (missing.length > 0)
    throw validationError(
      "Meta",
      `Dispatch did not provide required meta keys: [${missing.sort().join(" ")}]`,
    );
}

/** Nomad's DispatchedID: `<parent>/dispatch-<unix seconds>-<first 8 hex of a UUID>`. */
export function dispatchChildId(parentId: string, nowMs: number, uuid: string): string {
  return `${parentId}${DISPATCH_LAUNCH_SUFFIX}${Math.floor(nowMs / 1000)}-${uuid.replace(/-/g, "").slice(0, 8)}`;
}

/**
 * The dispatched child as Nomad's Dispatch builds it: the parent's copy under the child's ID and
 * Name, ParentID set, Dispatched, the request's meta merged over the parent's, the payload kept
 * (base64, as Nomad's API carries it), server-set fields cleared for the store to fill.
 */
export function dispatchedJob(
  parent: Job,
  id: string,
  payload: Buffer,
  meta: Record<string, string>,
  nowNs: number,
): Job {
  return {
    ...parent,
    ID: id,
    Name: id,
    ParentID: parent.ID,
    Dispatched: true,
    ...(payload.length > 0 ? { Payload: payload.toString("base64") } : {}),
    Meta: { ...(parent.Meta ?? {}), ...meta },
    Status: "pending",
    Stable: undefined,
    Version: 0,
    SubmitTime: nowNs,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
}
