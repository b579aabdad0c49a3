/**
 * "A task never receives a path that is not its volume" (docs/design.md invariant): a plugin's word that
 * NodeStage/NodePublish succeeded is checked on the host before anything relies on it. A plugin
 * whose mounts stayed in its own mount namespace (its bidirectional bind was cut off from the host,
 * or stage_publish_base_dir is not inside its bind of the plugin dir) or a plugin that simply did
 * not mount answers success all the same; without this check the task gets an empty directory and
 * writes outside the volume.
 *
 * - file-system: the host staging path (when staged) and the host target must be mount points.
 * - block: the host target must be a mount point (a bind-mounted device file) or a device node; a
 *   block staging path is the plugin's private scratch space (CSI spec), so it is not checked.
 *
 * Nothing here may hang on a dead mount (a FUSE daemon or NFS server that stopped answering would
 * hold a stat in the kernel, and the agent's thread with it): mount points come from
 * /proc/self/mountinfo with only the parent of the path resolved, and a block target is lstat'ed
 * only when it is not a mount point.
 *
 * The error is ERR_CSI_NOT_MOUNTED, retryable: the stage/publish is asked again (both are
 * idempotent), and the caller cleans up what it created when it finally gives up.
 */
import fs from "node:fs/promises";
import { BerthError } from "../../structs/errors.js";
import type { AttachmentMode } from "../../structs/volume.js";
import { isMountPoint } from "../../internal/mountinfo.js";

export interface MountProbe {
  isMountPoint(hostPath: string): Promise<boolean>;
  /** Whether a host path is a block or character device node; lstat by default. */
  isDeviceNode?(hostPath: string): Promise<boolean>;
}

export type CheckedCall = "NodeStageVolume" | "NodePublishVolume";

/** Whether `hostPath` holds what `call` must have produced for `attachment`. */
export async function holdsVolume(
  probe: MountProbe,
  call: CheckedCall,
  attachment: AttachmentMode,
  hostPath: string,
): Promise<boolean> {
  if (attachment !== "block-device") return probe.isMountPoint(hostPath);
  if (call === "NodeStageVolume") return true;
  if (await probe.isMountPoint(hostPath)) return true;
  return (probe.isDeviceNode ?? isDeviceNode)(hostPath);
}

/** Throws ERR_CSI_NOT_MOUNTED naming the plugin and the host path when the check fails. */
export async function requireMounted(
  probe: MountProbe,
  pluginId: string,
  call: CheckedCall,
  attachment: AttachmentMode,
  hostPath: string,
): Promise<void> {
  if (await holdsVolume(probe, call, attachment, hostPath)) return;
  const what = attachment === "block-device" ? "a mount point or a device node" : "a mount point";
  throw new BerthError(
    "ERR_CSI_NOT_MOUNTED",
    `CSI plugin ${JSON.stringify(pluginId)} reported ${call} success but ${hostPath} is not ${what}`,
  );
}

async function isDeviceNode(hostPath: string): Promise<boolean> {
  try {
    const st = await fs.lstat(hostPath);
    return st.isBlockDevice() || st.isCharacterDevice();
  } catch {
    return false;
  }
}

/** Whether a host path is a mount point, from /proc/self/mountinfo. */
export async function isMountPointOnHost(hostPath: string): Promise<boolean> {
  return isMountPoint(hostPath);
}
