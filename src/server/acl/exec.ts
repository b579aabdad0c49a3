/**
 * The ACL check of `GET /v1/client/allocation/:id/exec` (a WebSocket upgrade, outside the router):
 * alloc-exec in the alloc's namespace, and alloc-node-exec too when the task's driver does not
 * isolate the file system (raw_exec), as Nomad's ClientAllocations exec checks.
 */
import type { IncomingMessage } from "node:http";
import type { StateReader } from "../state/store.js";
import { permissionDenied, type AclEndpoint } from "./endpoint.js";
import { requestSecret } from "./secret.js";

/** Drivers whose tasks see the host's file system. */
const NO_FS_ISOLATION = new Set(["raw_exec"]);

export function execAuthorizer(acl: AclEndpoint, store: StateReader) {
  return (req: IncomingMessage, allocId: string, task: string): void => {
    if (!acl.enabled) return;
    const who = acl.resolve(requestSecret(req.headers));
    const alloc = store.getAlloc(allocId);
    if (!alloc) return; // the exec answers its own 404
    if (!who.acl.allowNamespaceOperation(alloc.Namespace, "alloc-exec")) throw permissionDenied();
    const driver = alloc.Job.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks.find(
      (t) => t.Name === task,
    )?.Driver;
    if (
      driver !== undefined &&
      NO_FS_ISOLATION.has(driver) &&
      !who.acl.allowNamespaceOperation(alloc.Namespace, "alloc-node-exec")
    )
      throw permissionDenied();
  };
}
