/** Small builders shared by the client unit tests. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RegisteredPlugin } from "../../../src/client/dynamicplugins/types.js";
import type { ClaimedVolume } from "../../../src/structs/rpc.js";
import type { CsiVolumeStub } from "../../../src/client/state/types.js";

const madeDirs: string[] = [];
// These tests never mount (their CSI clients are fakes), so removing the dirs at exit is safe.
process.once("exit", () => {
  for (const d of madeDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp dir removed when the test process exits. */
export function tempDir(prefix = "berth-client-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

export function plugin(over: Partial<RegisteredPlugin> = {}): RegisteredPlugin {
  return {
    role: "csi-node",
    pluginId: "fake",
    allocId: "plugin-alloc",
    taskName: "plugin",
    socketPath: "/tmp/none/csi.sock",
    hostDir: "/tmp/none",
    mountDir: "/csi",
    stagePublishBaseDir: "/csi",
    registeredAt: 1,
    ...over,
  };
}

export function claimedVolume(over: Partial<ClaimedVolume> = {}): ClaimedVolume {
  return {
    ID: "vol1",
    Namespace: "default",
    ExternalID: "ext-vol1",
    PluginID: "fake",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    MountOptions: null,
    Secrets: { password: "hunter2" },
    Context: { ctx: "from-volume" },
    Capacity: 0,
    ...over,
  };
}

export function stub(over: Partial<CsiVolumeStub> = {}): CsiVolumeStub {
  return {
    volumeId: "vol1",
    namespace: "default",
    pluginId: "fake",
    externalId: "ext-vol1",
    usage: { readOnly: false, accessMode: "single-node-writer", attachmentMode: "file-system" },
    stagingPath: "/s",
    targetPath: "/t",
    ...over,
  };
}

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
