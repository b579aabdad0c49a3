/**
 * The checks that need the request's body: a job's and a volume's namespace is the one in the
 * body (the URL's only fills it when empty), so the ACL is checked against that, per record, after
 * the body is validated and before anything is written (CVE-2024-10975: a token with
 * csi-write-volume in one namespace created volumes in another). Nomad's rules:
 *
 * - job register / plan: submit-job (or register-job / plan-job) in the job's namespace; a CSI
 *   volume also needs csi-mount-volume there and the plugin `read` level; a host volume needs
 *   mount-readwrite on it (mount-readonly suffices when the group mounts it read-only), and so does
 *   a bidirectional mount of it; a task that serves a CSI plugin needs csi-register-plugin.
 * - volume register / create: csi-write-volume in each volume's namespace, and plugin `read`.
 */
import type { Job } from "../../structs/job.js";
import { validateJob } from "../../structs/job_validate.js";
import type { Ctx } from "../request_ctx.js";
import { permissionDenied } from "./endpoint.js";
import { aclOf, requireNs, requirePluginRead } from "./guards.js";

export function authorizeJob(ctx: Ctx, job: Job, ops: string[] = ["submit-job", "register-job"]): void {
  const acl = aclOf(ctx);
  if (acl === undefined) return;
  const ns = job.Namespace;
  requireNs(ctx, ns, ...ops);
  for (const tg of job.TaskGroups) {
    for (const vol of Object.values(tg.Volumes ?? {})) {
      if (vol.Type === "csi") {
        requirePluginRead(ctx);
        requireNs(ctx, ns, "csi-mount-volume");
      } else if (vol.Type === "host") {
        const rw = acl.allowHostVolumeOperation(vol.Source, "mount-readwrite");
        const ro = acl.allowHostVolumeOperation(vol.Source, "mount-readonly");
        if (!(rw || (vol.ReadOnly && ro))) throw permissionDenied();
      } else {
        throw permissionDenied();
      }
    }
    for (const task of tg.Tasks) {
      for (const vm of task.VolumeMounts ?? []) {
        const vol = tg.Volumes?.[vm.Volume];
        if (
          vm.PropagationMode === "bidirectional" &&
          vol &&
          !acl.allowHostVolumeOperation(vol.Source, "mount-readwrite")
        )
          throw permissionDenied();
      }
      if (task.CSIPluginConfig) requireNs(ctx, ns, "csi-register-plugin");
    }
  }
}

export function authorizeVolumeWrites(ctx: Ctx, namespaces: Iterable<string>): void {
  if (aclOf(ctx) === undefined) return;
  requirePluginRead(ctx);
  for (const ns of namespaces) requireNs(ctx, ns, "csi-write-volume");
}

/**
 * authorizeJob for a job as submitted (before the endpoint validates it): validated here first
 * when ACLs are on, so the check reads the same job the endpoint stores; a bad job gets the
 * endpoint's own validation error.
 */
export function authorizeJobBody(ctx: Ctx, raw: unknown): void {
  if (aclOf(ctx) !== undefined) authorizeJob(ctx, validateJob(raw));
}
