/**
 * Where a volume is staged and published inside a plugin's directory. The same relative path is
 * used under the plugin's `stagePublishBaseDir` (its own view, handed to the plugin) and under its
 * `hostDir` (the host's view, handed to tasks and used to create and clean up directories):
 *   staging/<namespace>/<volumeId>/<usage-key>
 *   per-alloc/<allocId>/<volumeId>/<usage-key>
 * Every segment goes through safeJoin, so no ID can escape the plugin's directory.
 */
import path from "node:path";
import { safeJoin } from "../../structs/ids.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { VolumeUsage } from "../state/types.js";

/** e.g. `rw-file-system-single-node-writer`: one staging per distinct way a volume is used. */
export function usageKey(u: VolumeUsage): string {
  return `${u.readOnly ? "ro" : "rw"}-${u.attachmentMode}-${u.accessMode}`;
}

export interface VolumePaths {
  /** Plugin's view. */
  stagingPath: string;
  targetPath: string;
  /** Host's view of the same paths. */
  hostStagingPath: string;
  hostTargetPath: string;
}

export function volumePaths(
  plugin: Pick<RegisteredPlugin, "hostDir" | "stagePublishBaseDir">,
  ids: { namespace: string; volumeId: string; allocId: string },
  usage: VolumeUsage,
): VolumePaths {
  const staging = ["staging", ids.namespace, ids.volumeId, usageKey(usage)];
  const target = ["per-alloc", ids.allocId, ids.volumeId, usageKey(usage)];
  // Join under the host dir first: safeJoin proves the relative path stays inside, then the same
  // relative path is laid under the plugin's base (which is a path in another mount namespace).
  const hostStagingPath = safeJoin(plugin.hostDir, ...staging);
  const hostTargetPath = safeJoin(plugin.hostDir, ...target);
  const base = plugin.stagePublishBaseDir;
  return {
    stagingPath: path.posix.join(base, path.relative(path.resolve(plugin.hostDir), hostStagingPath)),
    targetPath: path.posix.join(base, path.relative(path.resolve(plugin.hostDir), hostTargetPath)),
    hostStagingPath,
    hostTargetPath,
  };
}

/** The key of the per-volume lock: one CSI call per volume in flight on this node. */
export function volumeKey(namespace: string, volumeId: string): string {
  return `${namespace}/${volumeId}`;
}

/** The key of one staging: a volume of a plugin, used one way. */
export function stagingKey(
  pluginId: string,
  namespace: string,
  volumeId: string,
  usage: VolumeUsage,
): string {
  return `${pluginId}\u0000${namespace}\u0000${volumeId}\u0000${usageKey(usage)}`;
}
