import assert from "node:assert/strict";
import { test } from "node:test";
import { registerClientCsiHandlers, type ClientCsiPeer } from "../../../src/client/rpc/client_csi.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";
import type { ControllerPublishRequest, CreateVolumeRequest } from "../../../src/csi/types.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";

type Handler = (req: unknown, signal: AbortSignal) => Promise<unknown>;

function setup(client: FakeCsiClient | undefined = new FakeCsiClient()) {
  const handlers = new Map<string, Handler>();
  const peer: ClientCsiPeer = {
    handle: (method, fn) => handlers.set(method, fn as Handler),
  };
  registerClientCsiHandlers(peer, {
    controllerClient: (id) => (id === "fake" ? client : undefined),
    log: nullLogger,
  });
  const call = <M extends keyof ClientMethods>(method: M, req: ClientMethods[M][0]) =>
    handlers.get(method)!(req, new AbortController().signal) as Promise<ClientMethods[M][1]>;
  return { handlers, call, client: client };
}

const createReq: ClientMethods["ClientCSI.ControllerCreateVolume"][0] = {
  PluginID: "fake",
  Name: "db",
  CapacityMin: 100,
  CapacityMax: 200,
  Capabilities: [
    { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
    { AccessMode: "multi-node-reader-only", AttachmentMode: "block-device" },
  ],
  MountOptions: { FSType: "xfs", MountFlags: ["ro"] },
  Parameters: { tier: "gold" },
  Secrets: { key: "s3cr3t" },
  SnapshotID: "snap-1",
  CloneID: "",
  TopologyRequest: { Required: [{ Segments: { zone: "a" } }], Preferred: null },
};

test("every controller ClientMethods entry has a handler (node ones need nodeVolumes)", () => {
  const { handlers } = setup();
  assert.deepEqual([...handlers.keys()].sort(), [
    "ClientCSI.ControllerCreateSnapshot",
    "ClientCSI.ControllerCreateVolume",
    "ClientCSI.ControllerDeleteSnapshot",
    "ClientCSI.ControllerDeleteVolume",
    "ClientCSI.ControllerExpandVolume",
    "ClientCSI.ControllerGetCapacity",
    "ClientCSI.ControllerGetVolume",
    "ClientCSI.ControllerListSnapshots",
    "ClientCSI.ControllerListVolumes",
    "ClientCSI.ControllerModifyVolume",
    "ClientCSI.ControllerPublishVolume",
    "ClientCSI.ControllerUnpublishVolume",
    "ClientCSI.ControllerValidateVolume",
  ]);
});

test("CreateVolume converts the DTO to CSI terms and the answer back", async () => {
  const { call, client } = setup();
  const res = await call("ClientCSI.ControllerCreateVolume", createReq);
  assert.deepEqual(client.callsOf("CreateVolume")[0]!.req, {
    name: "db",
    capacityRange: { requiredBytes: 100, limitBytes: 200 },
    volumeCapabilities: [
      { accessMode: "single-node-writer", access: { type: "mount", fsType: "xfs", mountFlags: ["ro"] } },
      { accessMode: "multi-node-reader-only", access: { type: "block" } },
    ],
    parameters: { tier: "gold" },
    secrets: { key: "s3cr3t" },
    contentSource: { snapshotId: "snap-1" },
    accessibilityRequirements: { requisite: [{ segments: { zone: "a" } }], preferred: [] },
  });
  assert.deepEqual(res, {
    ExternalVolumeID: "ext-vol-1",
    CapacityBytes: 1 << 30,
    VolumeContext: { created: "yes" },
    Topologies: [{ Segments: { zone: "a" } }],
  });

  await call("ClientCSI.ControllerCreateVolume", {
    ...createReq,
    CapacityMin: 0,
    CapacityMax: 0,
    SnapshotID: "",
    CloneID: "vol-src",
    TopologyRequest: null,
  });
  const second = client.callsOf("CreateVolume")[1]!.req as CreateVolumeRequest;
  assert.equal(second.capacityRange, null);
  assert.deepEqual(second.contentSource, { volumeId: "vol-src" });
  assert.equal(second.accessibilityRequirements, null);
});

test("publish/unpublish/delete/validate pass their fields through", async () => {
  const { call, client } = setup();
  const pub = await call("ClientCSI.ControllerPublishVolume", {
    PluginID: "fake",
    ExternalVolumeID: "ext-1",
    ExternalNodeID: "node-ext",
    Capability: { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
    MountOptions: null,
    ReadOnly: true,
    Secrets: { a: "b" },
    VolumeContext: { c: "d" },
  });
  assert.deepEqual(pub, { PublishContext: { device: "/dev/fake" } });
  assert.deepEqual(client.callsOf("ControllerPublishVolume")[0]!.req, {
    volumeId: "ext-1",
    nodeId: "node-ext",
    volumeCapability: {
      accessMode: "single-node-writer",
      access: { type: "mount", fsType: "", mountFlags: [] },
    },
    readonly: true,
    secrets: { a: "b" },
    volumeContext: { c: "d" },
  });
  await call("ClientCSI.ControllerUnpublishVolume", {
    PluginID: "fake",
    ExternalVolumeID: "ext-1",
    ExternalNodeID: "node-ext",
    Secrets: {},
  });
  assert.deepEqual(client.callsOf("ControllerUnpublishVolume")[0]!.req, {
    volumeId: "ext-1",
    nodeId: "node-ext",
    secrets: {},
  });

  client.failNext("DeleteVolume", "ERR_CSI_NOT_FOUND");
  assert.deepEqual(
    await call("ClientCSI.ControllerDeleteVolume", {
      PluginID: "fake",
      ExternalVolumeID: "ext-1",
      Secrets: {},
    }),
    {},
  );

  await call("ClientCSI.ControllerValidateVolume", {
    PluginID: "fake",
    ExternalVolumeID: "ext-1",
    Capabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "block-device" }],
    MountOptions: null,
    Parameters: {},
    Context: { c: "d" },
    Secrets: {},
  });
  assert.equal(client.callsOf("ValidateVolumeCapabilities").length, 1);
});

test("readonly is only sent to plugins advertising PUBLISH_READONLY", async () => {
  const { call, client } = setup();
  client.controllerCaps.publishReadonly = false;
  await call("ClientCSI.ControllerPublishVolume", {
    PluginID: "fake",
    ExternalVolumeID: "ext-1",
    ExternalNodeID: "n",
    Capability: { AccessMode: "multi-node-reader-only", AttachmentMode: "file-system" },
    MountOptions: null,
    ReadOnly: true,
    Secrets: {},
    VolumeContext: {},
  });
  assert.equal(
    (client.callsOf("ControllerPublishVolume")[0]!.req as ControllerPublishRequest).readonly,
    false,
  );
});

test("unadvertised capabilities are refused before any call; missing controller is unavailable", async () => {
  const { call, client } = setup();
  client.controllerCaps.createDeleteVolume = false;
  client.controllerCaps.publishUnpublishVolume = false;
  await assert.rejects(call("ClientCSI.ControllerCreateVolume", createReq), /CREATE_DELETE_VOLUME/);
  await assert.rejects(
    call("ClientCSI.ControllerDeleteVolume", { PluginID: "fake", ExternalVolumeID: "x", Secrets: {} }),
    { code: "ERR_CSI_NOT_SUPPORTED" },
  );
  await assert.rejects(
    call("ClientCSI.ControllerUnpublishVolume", {
      PluginID: "fake",
      ExternalVolumeID: "x",
      ExternalNodeID: "n",
      Secrets: {},
    }),
    { code: "ERR_CSI_NOT_SUPPORTED" },
  );
  assert.deepEqual(
    client.methods().filter((m) => m !== "ControllerGetCapabilities"),
    [],
  );
  await assert.rejects(call("ClientCSI.ControllerCreateVolume", { ...createReq, PluginID: "other" }), {
    code: "ERR_CSI_PLUGIN_UNAVAILABLE",
  });
});

test("an unconfirmed validation fails with the plugin's message", async () => {
  const { call, client } = setup();
  client.validateVolumeCapabilities = async () => ({ confirmed: null, message: "no block here" });
  await assert.rejects(
    call("ClientCSI.ControllerValidateVolume", {
      PluginID: "fake",
      ExternalVolumeID: "x",
      Capabilities: [],
      MountOptions: null,
      Parameters: {},
      Context: {},
      Secrets: {},
    }),
    /no block here/,
  );
});
