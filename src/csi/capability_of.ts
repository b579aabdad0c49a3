/**
 * berth's volume capability (access mode, attachment mode, mount options) in CSI terms. One place,
 * because the controller calls (ClientCSI) and the node calls (volume manager) must describe a
 * volume to the plugin identically.
 */
import type { AccessMode, AttachmentMode, MountOptions } from "../structs/volume.js";
import type { CsiVolumeCapability } from "./types.js";

/**
 * The access mode a plugin is sent for berth's `mode`. CSI 1.5's single-node-single-writer and
 * single-node-multi-writer go only to a plugin whose service (controller for controller calls,
 * node for node calls) advertises the SINGLE_NODE_MULTI_WRITER capability; any other gets
 * SINGLE_NODE_WRITER. The spec makes that safe: a plugin with the capability MUST still accept
 * SINGLE_NODE_WRITER "to permit older COs to continue working", and one without it predates the two
 * modes; how many workloads write is berth's claim rule (claim.ts), enforced before any call, so the
 * plugin loses nothing it would have enforced. Refusing instead would make the two modes unusable
 * with every plugin written before CSI 1.5.
 */
export function wireAccessMode(mode: AccessMode, singleNodeMultiWriter: boolean): AccessMode {
  if (singleNodeMultiWriter) return mode;
  return mode === "single-node-single-writer" || mode === "single-node-multi-writer"
    ? "single-node-writer"
    : mode;
}

/**
 * `singleNodeMultiWriter`: whether the plugin service the capability goes to advertises
 * SINGLE_NODE_MULTI_WRITER (see wireAccessMode).
 */
export function csiCapabilityOf(
  accessMode: AccessMode,
  attachmentMode: AttachmentMode,
  mount: MountOptions | null | undefined,
  singleNodeMultiWriter: boolean,
): CsiVolumeCapability {
  return {
    accessMode: wireAccessMode(accessMode, singleNodeMultiWriter),
    access:
      attachmentMode === "block-device"
        ? { type: "block" }
        : { type: "mount", fsType: mount?.FSType ?? "", mountFlags: [...(mount?.MountFlags ?? [])] },
  };
}
