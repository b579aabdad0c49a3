/**
 * The ClientCSI handlers for snapshots, expansion and ListVolumes (controller side) and for
 * NodeExpandVolume/NodeDetachVolume (node side), against the in-memory FakeCsiClient.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { registerClientCsiHandlers, type ClientCsiPeer } from "../../../src/client/rpc/client_csi.js";
import { nodeVolumeAccess } from "../../../src/client/rpc/client_csi_node.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import type { RegisteredPlugin } from "../../../src/client/dynamicplugins/types.js";
import type { CsiVolumeStub } from "../../../src/client/state/types.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";

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
  const stateDb = StateDB.open(":memory:");
  stateDb.putVolumeStubs("a1", { data: stub });
  stateDb.putVolumeStubs("a2", { data: { ...stub, pluginId: "gone" } });
  const volumeManager = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
    log: nullLogger,
    isMountPoint: async () => true,
  });
  const nodeVolumes = nodeVolumeAccess({
    stateDb,
    registry: { get: (_role, id) => (id === "fake" ? plugin : undefined) },
    volumeManager,
  });
  const handlers = new Map<string, Handler>();
  const peer: ClientCsiPeer = { handle: (method, fn) => handlers.set(method, fn as Handler) };
  registerClientCsiHandlers(peer, {
    controllerClient: (id) => (id === "fake" ? client : undefined),
    nodeVolumes,
    log: nullLogger,
  });
  const call = <M extends keyof ClientMethods>(method: M, req: ClientMethods[M][0]) =>
    handlers.get(method)!(req, new AbortController().signal) as Promise<ClientMethods[M][1]>;
  return { handlers, call, client, stateDb };
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
  assert.ok(handlers.has("ClientCSI.NodeVolumeState"));
  assert.equal(handlers.size, 16);
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

test("NodeDetachVolume unmounts through the volume manager, drops the stub; an unknown alloc is already detached", async () => {
  const { call, client, stateDb } = setup();
  await call("ClientCSI.NodeDetachVolume", ref);
  assert.deepEqual(
    client.calls.map((c) => c.method),
    ["NodeUnpublishVolume", "NodeUnstageVolume"],
  );
  assert.deepEqual(client.callsOf("NodeUnpublishVolume")[0]!.req, {
    volumeId: "ext-vol1",
    targetPath: "/csi/per-alloc/a1/vol1/rw-file-system-single-node-writer",
  });
  assert.deepEqual(stateDb.getVolumeStubs("a1"), {}, "the detached alloc's stub is gone");
  await call("ClientCSI.NodeDetachVolume", ref);
  await call("ClientCSI.NodeDetachVolume", { ...ref, AllocID: "other" });
  assert.equal(client.calls.length, 2, "idempotent");
  await assert.rejects(
    call("ClientCSI.NodeDetachVolume", { ...ref, PluginID: "gone", AllocID: "a2" }),
    /ERR_CSI_PLUGIN_UNAVAILABLE|not running on this node/,
  );
});

test("NodeDetachVolume marks the alloc's pending release unmounted, and skips one already unmounted", async () => {
  const { call, client, stateDb } = setup();
  stateDb.putPendingRelease("a1", "data", { stub, unmounted: false });
  await call("ClientCSI.NodeDetachVolume", ref);
  assert.deepEqual(stateDb.getPendingReleases("a1"), { data: { stub, unmounted: true } });
  assert.equal(client.callsOf("NodeUnpublishVolume").length, 1);

  // The alloc's own release unmounted it first: the detach makes no CSI call.
  stateDb.putVolumeStubs("a3", { data: stub });
  stateDb.putPendingRelease("a3", "data", { stub, unmounted: true });
  await call("ClientCSI.NodeDetachVolume", { ...ref, AllocID: "a3" });
  assert.equal(client.callsOf("NodeUnpublishVolume").length, 1);
  assert.deepEqual(
    stateDb.getPendingReleases("a3"),
    { data: { stub, unmounted: true } },
    "left to its release",
  );
});

test("ControllerGetVolume needs GET_VOLUME and VOLUME_CONDITION, and answers the plugin's condition", async () => {
  const { call, client } = setup();
  const req = { PluginID: "fake", ExternalVolumeID: "ext-vol1" };
  client.controllerCaps = { ...client.controllerCaps, getVolume: true, volumeCondition: false };
  await assert.rejects(call("ClientCSI.ControllerGetVolume", req), /VOLUME_CONDITION/);
  client.controllerCaps = { ...client.controllerCaps, getVolume: false, volumeCondition: true };
  await assert.rejects(call("ClientCSI.ControllerGetVolume", req), /GET_VOLUME/);
  assert.equal(client.callsOf("ControllerGetVolume").length, 0, "nothing unadvertised is called");

  client.controllerCaps = { ...client.controllerCaps, getVolume: true, volumeCondition: true };
  client.volumeCondition = { abnormal: true, message: "backing disk lost" };
  assert.deepEqual(await call("ClientCSI.ControllerGetVolume", req), {
    ExternalID: "ext-vol1",
    PublishedExternalNodeIDs: [],
    Condition: { Abnormal: true, Message: "backing disk lost" },
  });
  assert.deepEqual(client.callsOf("ControllerGetVolume")[0]!.req, { volumeId: "ext-vol1" });
  client.volumeCondition = null;
  assert.equal(
    ((await call("ClientCSI.ControllerGetVolume", req)) as { Condition: unknown }).Condition,
    null,
  );
});

test("ControllerModifyVolume sends the mutable parameters, only to a plugin with MODIFY_VOLUME", async () => {
  const { call, client } = setup();
  const req = {
    PluginID: "fake",
    ExternalVolumeID: "ext-vol1",
    MutableParameters: { iops: "3000" },
    Secrets: { k: "v" },
  };
  await assert.rejects(call("ClientCSI.ControllerModifyVolume", req), /MODIFY_VOLUME|modifyVolume/);
  assert.equal(client.callsOf("ControllerModifyVolume").length, 0, "refused before any call");
  client.controllerCaps = { ...client.controllerCaps, modifyVolume: true };
  assert.deepEqual(await call("ClientCSI.ControllerModifyVolume", req), {});
  assert.deepEqual(client.callsOf("ControllerModifyVolume")[0]!.req, {
    volumeId: "ext-vol1",
    secrets: { k: "v" },
    mutableParameters: { iops: "3000" },
  });
});

test("ControllerGetCapacity needs GET_CAPACITY and asks for the segment it names", async () => {
  const { call, client } = setup();
  const req = { PluginID: "fake", Topology: { Segments: { zone: "a" } }, Parameters: { tier: "fast" } };
  await assert.rejects(call("ClientCSI.ControllerGetCapacity", req), /GET_CAPACITY/);
  assert.equal(client.callsOf("GetCapacity").length, 0, "nothing unadvertised is called");
  client.controllerCaps = { ...client.controllerCaps, getCapacity: true };
  assert.deepEqual(await call("ClientCSI.ControllerGetCapacity", req), {
    AvailableCapacity: 0,
    MaximumVolumeSize: null,
    MinimumVolumeSize: null,
  });
  assert.deepEqual(client.callsOf("GetCapacity")[0]!.req, {
    volumeCapabilities: [],
    parameters: { tier: "fast" },
    accessibleTopology: { segments: { zone: "a" } },
  });
  await call("ClientCSI.ControllerGetCapacity", { ...req, Topology: null });
  assert.equal(
    (client.callsOf("GetCapacity")[1]!.req as { accessibleTopology: unknown }).accessibleTopology,
    null,
  );
});
