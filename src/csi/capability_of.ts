/**
 * berth's volume capability (access mode, attachment mode, mount options) in CSI terms. One place,
 * because the controller calls (ClientCSI) and the node calls (volume manager) must describe a
 * volume to the plugin identically.
 */
import type { AccessMode, AttachmentMode, MountOptions } from "../structs/volume.js";
import type { CsiVolumeCapability } from "./types.js";

export function csiCapabilityOf(
  accessMode: AccessMode,
  attachmentMode: AttachmentMode,
  mount: MountOptions | null | undefined,
): CsiVolumeCapability {
  return {
    accessMode,
    access:
      attachmentMode === "block-device"
        ? { type: "block" }
        : { type: "mount", fsType: mount?.FSType ?? "", mountFlags: [...(mount?.MountFlags ?? [])] },
  };
}
