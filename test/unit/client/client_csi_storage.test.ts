/**
 * The ClientCSI handlers for snapshots, expansion and ListVolumes (controller side) and for
 * NodeExpandVolume/NodeDetachVolume (node side), against the in-memory FakeCsiClient.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { registerClientCsiHandlers, type ClientCsiPeer } from "../../../src/client/rpc/client_csi.js";
import type { NodeVolumeAccess } from "../../../src/client/rpc/client_csi_node.js";
import type { UnmountVolumeRequest } from "../../../src/client/csimanager/volume_manager.js";
import type { RegisteredPlugin } from "../../../src/client/dynamicplugins/types.js";
import type { CsiVolumeStub } from "../../../src/client/state/types.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";
import { FakeCsiClient } from "./fake_csi_client.js";

type Handler = (req: unknown, signal: AbortSignal) => Promise<unknown>;

const plugin: RegisteredPlugin = {
  role: "csi-node",
  pluginId: "fake",
  allocId: "plugin-alloc",
  taskName: "plugin",
  socketPath: "/data/plugins/fake/csi.sock",
  hostDir: "/data/plugins/fake",
  mountDir: "/csi",
  stagePublishBaseDir: "/csi",
  registeredAt: 1,
};

const stub: CsiVolumeStub = {
  volumeId: "vol1",
  namespace: "default",
  pluginId: "fake",
  externalId: "ext-vol1",
  usage: { readOnly: false, accessMode: "single-node-writer", attachmentMode: "file-system" },
  stagingPath: "/data/plugins/fake/staging/default/vol1/rw-file-system-single-node-writer",
  targetPath: "/data/plugins/fake/per-alloc/a1/vol1/rw-file-system-single-node-writer",
};

function setup() {
  const client = new FakeCsiClient();
  client.controllerCaps = {
    ...client.controllerCaps,
    createDeleteSnapshot: true,
    listSnapshots: true,
    expandVolume: true,
    listVolumes: true,
  };
  client.nodeCaps = { ...client.nodeCaps, expandVolume: true };
  const unmounted: UnmountVolumeRequest[] = [];
  const nodeVolumes: NodeVolumeAccess = {
    volumeStubs: (allocId): Record<string, CsiVolumeStub> =>
      allocId === "a1" ? { data: stub } : allocId === "a2" ? { data: { ...stub, pluginId: "gone" } } : {},
    registeredNodePlugin: (id) => (id === "fake" ? plugin : undefined),
    nodePlugin: async () => ({ client, capabilities: client.nodeCaps }),
    unmountVolume: async (req) => {
      unmounted.push(req);
    },
  };
  const handlers = new Map<string, Handler>();
  const peer: ClientCsiPeer = { handle: (method, fn) => handlers.set(method, fn as Handler) };
  registerClientCsiHandlers(peer, {
    controllerClient: (id) => (id === "fake" ? client : undefined),
    nodeVolumes,
    log: nullLogger,
  });
  const call = <M extends keyof ClientMethods>(method: M, req: ClientMethods[M][0]) =>
    handlers.get(method)!(req, new AbortController().signal) as Promise<ClientMethods[M][1]>;
  return { handlers, call, client, unmounted };
}

const ref = {
  PluginID: "fake",
  VolumeID: "vol1",
  Namespace: "default",
  ExternalID: "ext-vol1",
  AllocID: "a1",
};

test("with nodeVolumes every ClientMethods entry has a handler", () => {
  const { handlers } = setup();
  assert.ok(handlers.has("ClientCSI.NodeExpandVolume") && handlers.has("ClientCSI.NodeDetachVolume"));
  assert.equal(handlers.size, 12);
});

test("snapshot calls convert both ways; creation time crosses as Unix seconds", async () => {
  const { call, client } = setup();
  const snap = await call("ClientCSI.ControllerCreateSnapshot", {
    PluginID: "fake",
    ExternalSourceVolumeID: "ext-vol1",
    Name: "nightly",
    Secrets: { k: "v" },
    Parameters: { p: "1" },
  });
  assert.deepEqual(client.callsOf("CreateSnapshot")[0]!.req, {
    sourceVolumeId: "ext-vol1",
    name: "nightly",
    secrets: { k: "v" },
    parameters: { p: "1" },
  });
  assert.deepEqual(snap, {
    ID: "snap-nightly",
    ExternalSourceVolumeID: "ext-vol1",
    SizeBytes: 0,
    CreateTime: 0,
    IsReady: true,
  });
  await call("ClientCSI.ControllerDeleteSnapshot", { PluginID: "fake", SnapshotID: "snap-1", Secrets: {} });
  client.failNext("DeleteSnapshot", "ERR_CSI_NOT_FOUND");
  await call("ClientCSI.ControllerDeleteSnapshot", { PluginID: "fake", SnapshotID: "gone", Secrets: {} });
  const list = await call("ClientCSI.ControllerListSnapshots", {
    PluginID: "fake",
    MaxEntries: 3,
    StartingToken: "t",
    Secrets: {},
  });
  assert.deepEqual(list, { Entries: [], NextToken: "" });
  assert.deepEqual(client.callsOf("ListSnapshots")[0]!.req, {
    maxEntries: 3,
    startingToken: "t",
    sourceVolumeId: "",
    snapshotId: "",
    secrets: {},
  });
});

test("ControllerExpandVolume passes the range and the claim's capability", async () => {
  const { call, client } = setup();
  const res = await call("ClientCSI.ControllerExpandVolume", {
    PluginID: "fake",
    ExternalVolumeID: "ext-vol1",
    CapacityMin: 4096,
    CapacityMax: 0,
    Capability: { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
    MountOptions: null,
    Secrets: {},
  });
  assert.deepEqual(res, { CapacityBytes: 4096, NodeExpansionRequired: true });
  assert.deepEqual(client.callsOf("ControllerExpandVolume")[0]!.req, {
    volumeId: "ext-vol1",
    capacityRange: { requiredBytes: 4096, limitBytes: 0 },
    secrets: {},
    volumeCapability: {
      accessMode: "single-node-writer",
      access: { type: "mount", fsType: "", mountFlags: [] },
    },
  });
});

test("unadvertised snapshot/expand/list capabilities are refused before any call", async () => {
  const { call, client } = setup();
  client.controllerCaps = { ...client.controllerCaps, createDeleteSnapshot: false, listVolumes: false };
  await assert.rejects(
    call("ClientCSI.ControllerCreateSnapshot", {
      PluginID: "fake",
      ExternalSourceVolumeID: "e",
      Name: "n",
      Secrets: {},
      Parameters: {},
    }),
    /ERR_CSI_NOT_SUPPORTED|CREATE_DELETE_SNAPSHOT/,
  );
  await assert.rejects(
    call("ClientCSI.ControllerListVolumes", { PluginID: "fake", MaxEntries: 0, StartingToken: "" }),
    /LIST_VOLUMES/,
  );
  assert.equal(client.callsOf("CreateSnapshot").length + client.callsOf("ListVolumes").length, 0);
});

test("NodeExpandVolume uses the stub's paths in the plugin's view; nothing mounted, nothing to do", async () => {
  const { call, client } = setup();
  const res = await call("ClientCSI.NodeExpandVolume", {
    ...ref,
    CapacityMin: 8192,
    CapacityMax: 0,
    Secrets: { k: "v" },
  });
  assert.deepEqual(res, { CapacityBytes: 8192 });
  assert.deepEqual(client.callsOf("NodeExpandVolume")[0]!.req, {
    volumeId: "ext-vol1",
    volumePath: "/csi/per-alloc/a1/vol1/rw-file-system-single-node-writer",
    stagingTargetPath: "/csi/staging/default/vol1/rw-file-system-single-node-writer",
    capacityRange: { requiredBytes: 8192, limitBytes: 0 },
    volumeCapability: null,
    secrets: { k: "v" },
  });
  assert.deepEqual(
    await call("ClientCSI.NodeExpandVolume", {
      ...ref,
      AllocID: "other",
      CapacityMin: 1,
      CapacityMax: 0,
      Secrets: {},
    }),
    { CapacityBytes: 0 },
  );
  client.nodeCaps = { ...client.nodeCaps, expandVolume: false };
  assert.deepEqual(
    await call("ClientCSI.NodeExpandVolume", { ...ref, CapacityMin: 1, CapacityMax: 0, Secrets: {} }),
    { CapacityBytes: 0 },
  );
  assert.equal(client.callsOf("NodeExpandVolume").length, 1, "only advertised, only for mounted volumes");
});

test("NodeDetachVolume unmounts through the volume manager; an unknown alloc is already detached", async () => {
  const { call, unmounted } = setup();
  await call("ClientCSI.NodeDetachVolume", ref);
  assert.deepEqual(unmounted, [
    {
      plugin,
      allocId: "a1",
      volumeId: "vol1",
      namespace: "default",
      externalId: "ext-vol1",
      usage: stub.usage,
    },
  ]);
  await call("ClientCSI.NodeDetachVolume", { ...ref, AllocID: "other" });
  assert.equal(unmounted.length, 1);
  await assert.rejects(
    call("ClientCSI.NodeDetachVolume", { ...ref, PluginID: "gone", AllocID: "a2" }),
    /ERR_CSI_PLUGIN_UNAVAILABLE|not running on this node/,
  );
});
