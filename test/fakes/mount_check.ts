/** A mount check answered from a FakeCsiClient's mounts, and the plugin/host path views it relies on. */
import path from "node:path";
import type { RegisteredPlugin } from "../../src/client/dynamicplugins/types.js";

/**
 * A VolumeManager `isMountPoint` that answers from a FakeCsiClient's mounts: a host path is mounted
 * when the plugin-view path it stands for was staged or published by the fake (volumePaths lays the
 * same relative path under hostDir and stagePublishBaseDir).
 */
export function fakeMountCheck(
  client: { mounts: ReadonlySet<string> },
  p: Pick<RegisteredPlugin, "hostDir" | "stagePublishBaseDir">,
): (hostPath: string) => Promise<boolean> {
  return async (hostPath) => client.mounts.has(toPluginView(p, hostPath));
}

/** The plugin's view of a host path under its host dir. */
export function toPluginView(
  p: Pick<RegisteredPlugin, "hostDir" | "stagePublishBaseDir">,
  hostPath: string,
): string {
  return path.posix.join(
    p.stagePublishBaseDir,
    path.relative(path.resolve(p.hostDir), path.resolve(hostPath)),
  );
}

/** The host's view of a plugin-view path. */
export function toHostView(
  p: Pick<RegisteredPlugin, "hostDir" | "stagePublishBaseDir">,
  pluginPath: string,
): string {
  return path.join(path.resolve(p.hostDir), path.posix.relative(p.stagePublishBaseDir, pluginPath));
}
