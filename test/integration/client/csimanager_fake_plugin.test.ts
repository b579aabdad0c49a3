/**
 * The csimanager, volume manager and ClientCSI handlers against FakeCsiPlugin (a real gRPC server
 * on a unix socket) through the real CSI client.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { test } from "node:test";
import { createCsiClient } from "../../../src/csi/client.js";
import { FakeCsiPlugin } from "../../../src/csi/fake/index.js";
import { CsiManager } from "../../../src/client/csimanager/manager.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { registerClientCsiHandlers, type ClientCsiPeer } from "../../../src/client/rpc/client_csi.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { CSIInfo } from "../../../src/structs/plugin.js";
import type { RegisteredPlugin } from "../../../src/client/dynamicplugins/types.js";

const USAGE = {
  readOnly: false,
  accessMode: "single-node-writer" as const,
  attachmentMode: "file-system" as const,
};

test("fingerprint, stage/publish refcount and controller calls through a real gRPC plugin", async (t) => {
  const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-int-"));
  t.after(() => fs.rmSync(hostDir, { recursive: true, force: true }));
  const fake = await FakeCsiPlugin.start({
    socketPath: path.join(hostDir, "csi.sock"),
    nodeInfo: { nodeId: "fake-node-7", maxVolumesPerNode: 3 },
  });
  t.after(() => fake.stop());
  const registry = new PluginRegistry(StateDB.open(":memory:"), nullLogger);
  const reports: Record<string, CSIInfo>[] = [];
  const manager = new CsiManager({
    registry,
    clientFactory: (socket) => createCsiClient(`unix://${socket}`, { log: nullLogger }),
    log: nullLogger,
    fingerprintIntervalMs: 60_000,
    onFingerprint: (controllers, nodes) => reports.push({ ...controllers, ...nodes }),
  });
  manager.start();
  t.after(() => manager.stop());
  const base = { pluginId: "fake", allocId: "pa", taskName: "p", socketPath: fake.socketPath, hostDir };
  const nodePlugin: RegisteredPlugin = {
    ...base,
    role: "csi-node",
    mountDir: hostDir,
    stagePublishBaseDir: hostDir,
    registeredAt: 1,
  };
  registry.register(nodePlugin);
  registry.register({ ...nodePlugin, role: "csi-controller" });

  const node = await manager.nodePlugin("fake");
  assert.equal(node.capabilities.stageUnstageVolume, true);
  await manager.refreshAll();
  const { nodes, controllers } = manager.fingerprints();
  assert.equal(nodes.fake?.NodeInfo?.ID, "fake-node-7");
  assert.equal(nodes.fake?.NodeInfo?.MaxVolumes, 3);
  assert.equal(controllers.fake?.ControllerInfo?.SupportsAttachDetach, true);
  assert.ok(reports.length > 0);

  // Controller side, as the server would drive it.
  const handlers = new Map<string, (req: unknown, s: AbortSignal) => Promise<unknown>>();
  const peer: ClientCsiPeer = { handle: (m, fn) => handlers.set(m, fn as never) };
  registerClientCsiHandlers(peer, {
    controllerClient: (id) => manager.controllerClient(id),
    log: nullLogger,
  });
  const created = (await handlers.get("ClientCSI.ControllerCreateVolume")!(
    {
      PluginID: "fake",
      Name: "db",
      CapacityMin: 1024,
      CapacityMax: 0,
      Capabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      MountOptions: null,
      Parameters: {},
      Secrets: {},
      SnapshotID: "",
      CloneID: "",
      TopologyRequest: null,
    },
    new AbortController().signal,
  )) as { ExternalVolumeID: string; VolumeContext: Record<string, string> };
  assert.ok(created.ExternalVolumeID);

  // Node side: two allocs share one staging.
  // The fake plugin records calls and mounts nothing; this test is about the calls, so every
  // staged or published path counts as mounted (the mount check has its own tests).
  const vm = new VolumeManager({
    plugins: manager,
    log: nullLogger,
    retry: { baseMs: 5, maxMs: 20, deadlineMs: 2000, jitter: 0 },
    isMountPoint: async () => true,
  });
  const volume = {
    ID: "db",
    Namespace: "default",
    ExternalID: created.ExternalVolumeID,
    PluginID: "fake",
    AccessMode: "single-node-writer" as const,
    AttachmentMode: "file-system" as const,
    MountOptions: null,
    Secrets: { token: "t0k" },
    Context: { ...created.VolumeContext, extra: "ctx" },
    Capacity: 1024,
  };
  const mount = (allocId: string) =>
    vm.mountVolume({
      plugin: nodePlugin,
      volume,
      allocId,
      usage: { ...USAGE, mountOptions: null },
      publishContext: { pc: "1" },
    });
  const m1 = await mount("a1");
  await mount("a2");
  assert.ok(fs.statSync(m1.source).isDirectory());
  assert.equal(fake.callsTo("NodeStageVolume").length, 1);
  assert.equal(fake.callsTo("NodePublishVolume").length, 2);
  const pub = fake.callsTo("NodePublishVolume")[0]!.request;
  assert.deepEqual(pub.publish_context, { pc: "1" });
  assert.equal((pub.volume_context as Record<string, string>).extra, "ctx");

  const unmount = (allocId: string) =>
    vm.unmountVolume({
      plugin: nodePlugin,
      allocId,
      volumeId: "db",
      namespace: "default",
      externalId: created.ExternalVolumeID,
      usage: USAGE,
    });
  // A transient error is retried through the real error mapping.
  fake.failNext("NodeUnpublishVolume", 1, { code: status.UNAVAILABLE, message: "busy" });
  await unmount("a1");
  assert.equal(fake.callsTo("NodeUnpublishVolume").length, 2);
  assert.equal(fake.callsTo("NodeUnstageVolume").length, 0);
  await unmount("a2");
  assert.equal(fake.callsTo("NodeUnstageVolume").length, 1);
  assert.equal(fs.existsSync(m1.source), false);

  // UNIMPLEMENTED is not retried.
  fake.failNext("NodeStageVolume", 1, { code: status.UNIMPLEMENTED, message: "no" });
  await assert.rejects(mount("a3"), { code: "ERR_CSI_UNIMPLEMENTED" });
  assert.equal(fake.callsTo("NodeStageVolume").length, 2);
});
