/** Client-side records: a registered plugin, a claimed volume as the server returns it, a volume stub. */
import type { RegisteredPlugin } from "../../src/client/dynamicplugins/types.js";
import type { ClaimedVolume } from "../../src/structs/rpc.js";
import type { CsiVolumeStub } from "../../src/client/state/types.js";

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
