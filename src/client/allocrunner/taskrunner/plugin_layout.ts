/**
 * Where a CSI plugin task's socket and volumes live, on the host and in the task (Nomad's layout,
 * client/allocrunner/taskrunner/plugin_supervisor_hook.go):
 * - the plugin dir `<data>/client/csi/<type>/<id>` (staging/, per-alloc/) is shared by every alloc
 *   of the plugin on the node (plugin_dirs.ts owns it) and bound bidirectionally at
 *   `stage_publish_base_dir` (Nomad's default `/local/csi` when unset);
 * - the socket lives in a dir of this alloc's task, `<data>/client/csi/plugins/<key>` (key: a short
 *   hash of alloc ID and task name, as a unix socket path is limited to 107 bytes), bound at
 *   `mount_dir`: during a plugin job update the old instance removing its socket when it exits
 *   (Node's net server unlinks its path on close) can never take its successor's socket away.
 * `mount_dir` set equal to `stage_publish_base_dir` keeps everything in the plugin dir with one
 * bind (the socket is then shared by successive allocs). A driver without mount support runs the
 * plugin in the host's view: nothing is bound, and the plugin is handed host paths.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { safeJoin } from "../../../structs/ids.js";
import type { TaskCSIPluginConfig } from "../../../structs/job.js";
import type { TaskMount } from "../../drivers/driver.js";
import { pluginHostDir } from "./plugin_dirs.js";

/** Nomad's default stage_publish_base_dir, used when the csi_plugin block leaves it unset. */
export const DEFAULT_STAGE_PUBLISH_BASE_DIR = "/local/csi";

export interface PluginLayout {
  /** The shared plugin dir on the host (staging and publish targets). */
  hostDir: string;
  /** The host dir holding this task's socket (hostDir itself in the one-bind layout). */
  socketDir: string;
  /** The socket on the host: what berth dials. */
  socketPath: string;
  /** What the task gets bound (none without mount support). */
  mounts: TaskMount[];
  /** CSI_ENDPOINT, in the task's view. */
  endpoint: string;
  /** The plugin's view of its dir and of the base staging/publish paths are built under. */
  mountDir: string;
  stagePublishBaseDir: string;
}

export function pluginLayout(
  dataDir: string,
  ids: { allocId: string; taskName: string },
  plugin: Pick<TaskCSIPluginConfig, "ID" | "Type" | "MountDir" | "StagePublishBaseDir">,
  driverSupportsMounts: boolean,
): PluginLayout {
  const hostDir = pluginHostDir(dataDir, plugin);
  const key = createHash("sha256").update(`${ids.allocId}/${ids.taskName}`).digest("hex").slice(0, 16);
  const ownSocketDir = safeJoin(dataDir, "client", "csi", "plugins", key);
  if (!driverSupportsMounts) {
    const socketPath = path.join(ownSocketDir, "csi.sock");
    return {
      hostDir,
      socketDir: ownSocketDir,
      socketPath,
      mounts: [],
      endpoint: `unix://${socketPath}`,
      mountDir: hostDir,
      stagePublishBaseDir: hostDir,
    };
  }
  const mountDir = cleanTaskPath(plugin.MountDir);
  const base = cleanTaskPath(plugin.StagePublishBaseDir || DEFAULT_STAGE_PUBLISH_BASE_DIR);
  const shared: TaskMount = {
    hostPath: hostDir,
    taskPath: base,
    readOnly: false,
    propagation: "bidirectional",
  };
  const endpoint = `unix://${path.posix.join(mountDir, "csi.sock")}`;
  if (base === mountDir) {
    return {
      hostDir,
      socketDir: hostDir,
      socketPath: path.join(hostDir, "csi.sock"),
      mounts: [shared],
      endpoint,
      mountDir,
      stagePublishBaseDir: base,
    };
  }
  return {
    hostDir,
    socketDir: ownSocketDir,
    socketPath: path.join(ownSocketDir, "csi.sock"),
    mounts: [{ hostPath: ownSocketDir, taskPath: mountDir, readOnly: false, propagation: "private" }, shared],
    endpoint,
    mountDir,
    stagePublishBaseDir: base,
  };
}

/** The longest unix socket path Linux binds (sun_path is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** Null when `socketPath` can be bound, else why not (naming the path and the limit). */
export function socketPathProblem(socketPath: string): string | null {
  const n = Buffer.byteLength(socketPath);
  if (n <= MAX_SOCKET_PATH_BYTES) return null;
  return `CSI plugin socket path ${socketPath} is ${n} bytes, longer than the ${MAX_SOCKET_PATH_BYTES} a unix socket allows: use a shorter -data-dir`;
}

/** `/csi/` and `/csi` are one task path. */
function cleanTaskPath(p: string): string {
  const n = path.posix.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, "") : n;
}
