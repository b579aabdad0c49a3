/**
 * Storage belongs to the namespace whose volume record holds its external ID (issue 30): a token
 * that may write volumes in namespace `a` must not reach `b`'s storage through the plugin. Two
 * rules, both only for a client token with ACLs on (management and ACLs-off callers are not
 * limited, and pay nothing):
 * - registering a volume on an external ID that a record of another namespace holds (same plugin)
 *   is refused: a second record on the same storage would bypass the first one's claims (its
 *   single writer);
 * - the plugin's own list (`/v1/volumes/external`) keeps only the external IDs held by records in
 *   namespaces the token may list volumes in; storage no record holds is the operator's to see.
 * The check reads the plugin's volume records (a register is a rare write; no store index by
 * external ID exists yet).
 */
import { BerthError } from "../../structs/errors.js";
import type { CSIVolumeExternalStub } from "../../structs/snapshot.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { Ctx, HttpEndpoints } from "../request_ctx.js";
import { aclOf, allowNs } from "./guards.js";

function limited(ctx: Ctx): boolean {
  const acl = aclOf(ctx);
  return acl !== undefined && !acl.isManagement();
}

/** Throws ERR_PERMISSION_DENIED when a volume of `vols` names storage another namespace's record holds. */
export function authorizeExternalIds(ctx: Ctx, api: HttpEndpoints, vols: readonly CSIVolume[]): void {
  if (!limited(ctx)) return;
  for (const v of vols) {
    if (v.ExternalID === "") continue;
    const held = api.store
      .listVolumes({ pluginId: v.PluginID })
      .some((o) => o.ExternalID === v.ExternalID && o.Namespace !== v.Namespace);
    if (held) {
      throw new BerthError(
        "ERR_PERMISSION_DENIED",
        `Permission denied: external volume ${JSON.stringify(v.ExternalID)} of plugin ${JSON.stringify(v.PluginID)} is registered in another namespace; only a management token may register it again`,
      );
    }
  }
}

/** The plugin's external volumes the caller may see (see the file comment). */
export function visibleExternal(
  ctx: Ctx,
  api: HttpEndpoints,
  pluginId: string,
  entries: CSIVolumeExternalStub[],
  ops: readonly string[],
): CSIVolumeExternalStub[] {
  if (!limited(ctx)) return entries;
  const visible = new Set<string>();
  for (const v of api.store.listVolumes({ pluginId })) {
    if (allowNs(ctx, v.Namespace, ...ops)) visible.add(v.ExternalID);
  }
  return entries.filter((e) => visible.has(e.ExternalID));
}
