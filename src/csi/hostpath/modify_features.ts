/**
 * csi-hostpath's optional behaviours for issue 33 items 6 and 7, each behind a flag (flags.ts):
 *
 * - `--expansion=online|offline|none`: which VolumeExpansion plugin capability it advertises
 *   (online, the default, as before; offline; none, which also drops the EXPAND_VOLUME controller
 *   and node capabilities). Offline, ControllerExpandVolume of a volume that is mounted or attached
 *   anywhere answers FAILED_PRECONDITION, as a plugin that cannot grow a volume in use does.
 * - `--modify-volume`: advertises MODIFY_VOLUME (the handlers are in modify.ts).
 * - `--volume-mount-group`: advertises the node capability VOLUME_MOUNT_GROUP; NodePublish applies
 *   the capability's volume_mount_group to the published volume (the ownership walk, once: the
 *   on_root_mismatch policy). Without the flag a volume_mount_group is refused with
 *   INVALID_ARGUMENT, which proves a CO never sends it to a plugin that did not advertise it.
 */
import { status } from "@grpc/grpc-js";
import { applyGroupOwnership } from "../../internal/group_ownership.js";
import type { WireVolumeCapability } from "../wire.js";
import { rpcError, type HostpathContext } from "./context.js";
import { mountsOfVolume } from "./controller.js";
import { controllerExpandVolume } from "./expand.js";
import type { HostpathConfig } from "./flags.js";
import type { ExpansionMode } from "./expansion_mode.js";

const expansionOf = (config: HostpathConfig): ExpansionMode => config.expansion ?? "online";

/** The VolumeExpansion plugin capability, by --expansion. */
export function expansionPluginCapabilities(
  config: HostpathConfig,
): { volume_expansion: { type: string } }[] {
  const mode = expansionOf(config);
  return mode === "none" ? [] : [{ volume_expansion: { type: mode === "online" ? "ONLINE" : "OFFLINE" } }];
}

/** Whether EXPAND_VOLUME (controller and node) is advertised. */
export function expands(config: HostpathConfig): boolean {
  return expansionOf(config) !== "none";
}

/** Controller RPC capabilities these flags add. */
export function featureControllerCapabilities(config: HostpathConfig): string[] {
  return config.modifyVolume ? ["MODIFY_VOLUME"] : [];
}

/** Node RPC capabilities these flags add. */
export function featureNodeCapabilities(config: HostpathConfig): string[] {
  return config.volumeMountGroup ? ["VOLUME_MOUNT_GROUP"] : [];
}

/** ControllerExpandVolume honouring --expansion (offline: refused while the volume is in use). */
export async function expandByMode(
  ctx: HostpathContext,
  req: Parameters<typeof controllerExpandVolume>[1],
): Promise<object> {
  const mode = expansionOf(ctx.config);
  if (mode === "none") throw rpcError(status.UNIMPLEMENTED, "volume expansion is off (--expansion=none)");
  if (mode === "offline" && req.volume_id && (await ctx.volumes.get(req.volume_id))) {
    const mounted = await mountsOfVolume(ctx.volumes, req.volume_id);
    const attached = await ctx.attachments.list(req.volume_id);
    if (mounted.length > 0 || attached.length > 0) {
      throw rpcError(
        status.FAILED_PRECONDITION,
        `volume ${req.volume_id} is in use and this plugin expands only offline (--expansion=offline)`,
      );
    }
  }
  return controllerExpandVolume(ctx, req);
}

/** In NodePublish: applies volume_mount_group (--volume-mount-group), else refuses one. */
export async function applyVolumeMountGroup(
  ctx: HostpathContext,
  stagingPath: string,
  cap: WireVolumeCapability,
): Promise<void> {
  const group = cap.mount?.volume_mount_group ?? "";
  if (group === "") return;
  if (!ctx.config.volumeMountGroup) {
    throw rpcError(
      status.INVALID_ARGUMENT,
      "volume_mount_group sent, but VOLUME_MOUNT_GROUP is not advertised",
    );
  }
  if (!/^[0-9]+$/.test(group))
    throw rpcError(status.INVALID_ARGUMENT, `volume_mount_group ${group} is not a gid`);
  // On the staging mount, which is always writable (a read-only publish could not be changed).
  const res = await applyGroupOwnership(stagingPath, Number(group), "on_root_mismatch");
  ctx.log.info("volume mount group applied", { path: stagingPath, group, changed: res.changed });
}
