/**
 * The node side of a mount group (structs/mount_group.ts) for the VolumeManager: the capability
 * NodeStage/NodePublish receive (with `volumeMountGroup` only for a plugin that advertises
 * VOLUME_MOUNT_GROUP, as CSI requires), and berth's own ownership walk after NodePublish for a
 * plugin that does not. A failed walk fails the publish (the task would not be able to write).
 */
import type { CsiNodeCapabilities, CsiVolumeCapability } from "../../csi/types.js";
import { csiCapabilityOf } from "../../csi/capability_of.js";
import { applyGroupOwnership } from "../../internal/group_ownership.js";
import type { Logger } from "../../internal/log.js";
import { mountGroupRoute } from "../../structs/mount_group.js";
import type { MountUsage } from "./volume_requests.js";

function routeOf(usage: MountUsage, caps: CsiNodeCapabilities): "none" | "plugin" | "berth" {
  if (usage.attachmentMode !== "file-system") return "none";
  return mountGroupRoute(usage.mountOptions?.MountGroup, caps.volumeMountGroup, usage.readOnly);
}

/** The capability for the node calls: the mount group in it only when the plugin applies it. */
export function nodeCapabilityOf(usage: MountUsage, caps: CsiNodeCapabilities): CsiVolumeCapability {
  const cap = csiCapabilityOf(
    usage.accessMode,
    usage.attachmentMode,
    usage.mountOptions,
    caps.singleNodeMultiWriter,
  );
  const group = usage.mountOptions?.MountGroup;
  if (group !== undefined && cap.access.type === "mount" && routeOf(usage, caps) === "plugin") {
    cap.access.volumeMountGroup = group;
  }
  return cap;
}

/** After NodePublish: berth's walk of the published target, when berth is the one to apply it. */
export async function applyMountGroupAfterPublish(
  hostTargetPath: string,
  usage: MountUsage,
  caps: CsiNodeCapabilities,
  log: Logger,
  signal?: AbortSignal,
): Promise<void> {
  const group = usage.mountOptions?.MountGroup;
  if (group === undefined || routeOf(usage, caps) !== "berth") return;
  const policy = usage.mountOptions?.MountGroupPolicy;
  const res = await applyGroupOwnership(hostTargetPath, Number(group), policy, signal);
  log.info(res.walked ? "volume group ownership applied" : "volume group ownership already in place", {
    group,
    policy: policy ?? "always",
    changed: res.changed,
  });
}
