import assert from "node:assert/strict";
import { test } from "node:test";
import { CsiManager } from "../../../src/client/csimanager/manager.js";
import { fingerprintPlugin } from "../../../src/client/csimanager/fingerprint.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { CSIInfo } from "../../../src/structs/plugin.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { plugin } from "../../builders/client_records.js";

test("fingerprint: a node instance becomes CSIInfo with NodeInfo from NodeGetInfo/capabilities", async () => {
  const client = new FakeCsiClient();
  client.pluginCaps.volumeAccessibilityConstraints = true;
  client.nodeInfo = {
    nodeId: "i-123",
    maxVolumesPerNode: 7,
    accessibleTopology: { segments: { zone: "z1" } },
  };
  client.nodeCaps.getVolumeStats = true;
  const fp = await fingerprintPlugin(client, plugin({ allocId: "pa" }), { timeoutMs: 1000 });
  const { UpdateTime, ...info } = fp.info;
  assert.ok(UpdateTime > 0);
  assert.deepEqual(info, {
    PluginID: "fake",
    AllocID: "pa",
    Healthy: true,
    HealthDescription: "healthy",
    Provider: "fake.csi",
    ProviderVersion: "1.2.3",
    RequiresControllerPlugin: true,
    RequiresTopologies: true,
    ControllerInfo: null,
    NodeInfo: {
      ID: "i-123",
      MaxVolumes: 7,
      AccessibleTopology: { Segments: { zone: "z1" } },
      RequiresNodeStageVolume: true,
      SupportsStats: true,
      SupportsExpand: false,
      SupportsCondition: false,
    },
  });
  assert.deepEqual(client.methods(), [
    "GetPluginInfo",
    "GetPluginCapabilities",
    "Probe",
    "NodeGetInfo",
    "NodeGetCapabilities",
  ]);
});

test("fingerprint: a controller instance gets ControllerInfo; failures and not-ready are unhealthy", async () => {
  const client = new FakeCsiClient();
  client.controllerCaps.publishUnpublishVolume = false;
  const fp = await fingerprintPlugin(client, plugin({ role: "csi-controller" }), { timeoutMs: 1000 });
  assert.equal(fp.info.NodeInfo, null);
  assert.equal(fp.info.ControllerInfo?.SupportsCreateDelete, true);
  assert.equal(fp.info.ControllerInfo?.SupportsAttachDetach, false);
  assert.equal(fp.info.ControllerInfo?.SupportsReadOnlyAttach, true);
  assert.ok(!client.methods().includes("NodeGetInfo"));

  client.ready = false;
  const notReady = await fingerprintPlugin(
    client,
    plugin({ role: "csi-controller" }),
    { timeoutMs: 1000 },
    fp,
  );
  assert.equal(notReady.info.Healthy, false);

  client.failNext("Probe", "ERR_CSI_UNAVAILABLE");
  const failed = await fingerprintPlugin(client, plugin({ role: "csi-controller" }), { timeoutMs: 1000 }, fp);
  assert.equal(failed.info.Healthy, false);
  assert.match(failed.info.HealthDescription, /fingerprint failed/);
  assert.equal(failed.info.Provider, "fake.csi", "keeps what it knew");
});

test("manager: follows the registry and reports fingerprints when they change", async () => {
  const registry = new PluginRegistry(StateDB.open(":memory:"), nullLogger);
  registry.register(plugin({ role: "csi-controller", socketPath: "/c.sock" }));
  const clients = new Map<string, FakeCsiClient>();
  const reports: { controllers: Record<string, CSIInfo>; nodes: Record<string, CSIInfo> }[] = [];
  let notify: () => void = () => undefined;
  const manager = new CsiManager({
    registry,
    clientFactory: (socketPath) => {
      const c = new FakeCsiClient(socketPath);
      clients.set(socketPath, c);
      return c;
    },
    log: nullLogger,
    fingerprintIntervalMs: 10,
    onFingerprint: (controllers, nodes) => {
      reports.push({ controllers, nodes });
      notify();
    },
  });
  const nextReport = () => new Promise<void>((resolve) => (notify = resolve));

  let waiting = nextReport();
  manager.start();
  await waiting;
  assert.deepEqual(Object.keys(reports.at(-1)!.controllers), ["fake"]);
  assert.ok(manager.controllerClient("fake"));
  assert.equal(manager.controllerCapabilities("fake")?.createDeleteVolume, true);

  waiting = nextReport();
  registry.register(plugin({ socketPath: "/n.sock" }));
  await waiting;
  assert.equal(reports.at(-1)!.nodes.fake?.NodeInfo?.ID, "ext-node-1");
  const node = await manager.nodePlugin("fake");
  // The handle's client follows the plugin: its calls reach the instance's current connection.
  const infoCalls = clients.get("/n.sock")!.callsOf("NodeGetInfo").length;
  await node.client.nodeGetInfo();
  assert.equal(clients.get("/n.sock")!.callsOf("NodeGetInfo").length, infoCalls + 1);
  assert.equal(node.capabilities.stageUnstageVolume, true);

  // Re-fingerprints keep running, but an unchanged fingerprint is not reported again.
  const before = reports.length;
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(clients.get("/n.sock")!.callsOf("Probe").length >= 2);
  assert.equal(reports.length, before);

  waiting = nextReport();
  clients.get("/c.sock")!.ready = false;
  await waiting;
  assert.equal(reports.at(-1)!.controllers.fake?.Healthy, false);
  assert.equal(manager.controllerClient("fake"), undefined, "only healthy controllers take calls");

  waiting = nextReport();
  registry.deregister("csi-node", "fake", "plugin-alloc");
  await waiting;
  assert.deepEqual(reports.at(-1)!.nodes, {});
  await assert.rejects(manager.nodePlugin("fake"), { code: "ERR_CSI_PLUGIN_UNAVAILABLE" });

  await manager.stop();
  assert.ok(clients.get("/c.sock")!.closed && clients.get("/n.sock")!.closed, "connections closed");
});
