/**
 * Plugin health through node loss: a down node's instances count as unhealthy in the plugin record
 * (counts, the volume's Schedulable, controller candidates, placement), and everything returns
 * when the node is ready again. The node's own fingerprint is never rewritten.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { HeartbeatMonitor } from "../../../src/server/heartbeat.js";
import { markNodeDown } from "../../../src/server/node_loss.js";
import { NodeEndpoint } from "../../../src/server/rpc/node.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { volumeView } from "../../../src/server/state/views.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { NODE_DOWN_HEALTH } from "../../../src/structs/plugin.js";
import { csiJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

/**
 * n1 runs the controller and a node plugin, n2 a node plugin; vol1 needs ControllerPublish. The
 * plugin job expects 1 controller and 2 node instances (ControllersExpected / NodesExpected).
 */
async function cluster() {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  await store.txn((tx) => {
    tx.putJob(
      validateJob({
        ID: "csi",
        TaskGroups: [
          ["controller", 1],
          ["node", 2],
        ].map(([type, count]) => ({
          Name: type,
          Count: count,
          Tasks: [
            { Name: "plugin", Driver: "exec", CSIPluginConfig: { ID: "p1", Type: type, MountDir: "/csi" } },
          ],
        })),
      }),
    );
    tx.putNode(
      makeNode("n1", {
        CSIControllerPlugins: { p1: controllerInfo("p1") },
        CSINodePlugins: { p1: nodePluginInfo("p1") },
      }),
    );
    tx.putNode(makeNode("n2", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putVolume(makeVolume("vol1"));
  });
  const hb = new HeartbeatMonitor(store, scheduler, 60_000, nullLogger);
  const conns = new NodeConnections();
  const deps = {
    store,
    scheduler,
    conns,
    controllers: new ControllerClient(store, conns, nullLogger),
    volumeLocks: new KeyedMutex(),
    log: nullLogger,
  };
  const nodes = new NodeEndpoint(deps, hb);
  const counts = () => {
    const p = store.getPlugin("p1")!;
    return [p.ControllersHealthy, p.ControllersExpected, p.NodesHealthy, p.NodesExpected];
  };
  const schedulable = () => volumeView(store, "default", "vol1")!.Schedulable;
  return { store, scheduler, hb, conns, deps, nodes, counts, schedulable };
}

test("plugin health: a down node's instances are unhealthy; counts and Schedulable return with it", async () => {
  const c = await cluster();
  assert.deepEqual(c.counts(), [1, 1, 2, 2]);
  assert.equal(c.schedulable(), true);

  await c.store.txn((tx) => markNodeDown(tx, "n2", Date.now(), "node missed its heartbeat"));
  assert.deepEqual(c.counts(), [1, 1, 1, 2], "n2's node instance is expected but not healthy");
  const p = c.store.getPlugin("p1")!;
  assert.deepEqual([p.Nodes.n2!.Healthy, p.Nodes.n2!.HealthDescription], [false, NODE_DOWN_HEALTH]);
  assert.equal(c.store.getNode("n2")!.CSINodePlugins.p1!.Healthy, true, "the node keeps its fingerprint");
  assert.equal(c.schedulable(), true, "n1 still serves the volume");

  await c.store.txn((tx) => markNodeDown(tx, "n1", Date.now(), "node missed its heartbeat"));
  assert.deepEqual(c.counts(), [0, 1, 0, 2]);
  assert.equal(c.schedulable(), false, "no healthy controller or node plugin is left");

  // A heartbeat brings each node back; the plugin record follows without a new fingerprint.
  await c.nodes.heartbeat({ NodeID: "n1" });
  assert.deepEqual(c.counts(), [1, 1, 1, 2]);
  assert.equal(c.schedulable(), true);
  await c.nodes.heartbeat({ NodeID: "n2" });
  await c.hb.stop();
  assert.deepEqual(c.counts(), [1, 1, 2, 2]);
  assert.equal(c.store.getPlugin("p1")!.Nodes.n2!.HealthDescription, "healthy");
  c.store.close();
});

test("plugin health: the plugin's index moves with a node's status, not with a heartbeat", async () => {
  const c = await cluster();
  const before = c.store.tableIndex("plugins");
  await c.store.txn((tx) => markNodeDown(tx, "n2", Date.now(), "down"));
  const down = c.store.tableIndex("plugins");
  assert.ok(down > before, "a blocking query on plugins wakes when a node goes down");
  await c.nodes.heartbeat({ NodeID: "n2" });
  const back = c.store.tableIndex("plugins");
  assert.ok(back > down);
  await c.nodes.heartbeat({ NodeID: "n2" });
  await c.hb.stop();
  assert.equal(c.store.tableIndex("plugins"), back, "a heartbeat of a ready node writes nothing");
  c.store.close();
});

test("plugin health: controller calls skip a down node's controller", async () => {
  const c = await cluster();
  await c.store.txn((tx) =>
    tx.putNode({ ...tx.getNode("n2")!, CSIControllerPlugins: { p1: controllerInfo("p1") } }),
  );
  const called: string[] = [];
  const conn = (id: string): NodeConn => ({
    isOpen: true,
    call: <T>() => {
      called.push(id);
      return Promise.resolve({ PublishContext: {} } as T);
    },
    close: () => undefined,
  });
  c.conns.add("n1", conn("n1"));
  c.conns.add("n2", conn("n2"));
  await c.store.txn((tx) => markNodeDown(tx, "n1", Date.now(), "down"));
  const params = {
    PluginID: "p1",
    ExternalVolumeID: "ext-vol1",
    ExternalNodeID: "ext-node",
    Capability: { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
    MountOptions: null,
    ReadOnly: false,
    Secrets: {},
    VolumeContext: {},
  } as const;
  for (let i = 0; i < 4; i++) {
    await c.deps.controllers.call("p1", "ClientCSI.ControllerPublishVolume", params);
  }
  assert.deepEqual(called, ["n2", "n2", "n2", "n2"], "the down node's controller is never a candidate");
  c.store.close();
});

test("plugin health: placement waits while the node plugins are all down; a down controller never gates it", async () => {
  const c = await cluster();
  await c.store.txn((tx) => {
    markNodeDown(tx, "n1", Date.now(), "down");
    markNodeDown(tx, "n2", Date.now(), "down");
    tx.putJob(csiJob("j"));
  });
  assert.equal((await c.scheduler.evaluate("default", "j")).placed, 0);
  assert.ok(c.scheduler.isBlocked("default", "j"));
  assert.equal(volumeView(c.store, "default", "vol1")!.ControllerRequired, false);

  // n2's node plugin is back, the only controller (on n1) is not: its node is down, so its
  // "supports attach/detach" does not make the volume wait for a controller nothing can reach.
  await c.nodes.heartbeat({ NodeID: "n2" });
  await c.scheduler.retryBlocked();
  assert.deepEqual(
    c.store.allocsByJob("default", "j").map((a) => a.NodeID),
    ["n2"],
  );
  assert.equal(c.scheduler.isBlocked("default", "j"), false);

  // The controller back on a live node speaks for the plugin again.
  await c.nodes.heartbeat({ NodeID: "n1" });
  await c.hb.stop();
  assert.equal(volumeView(c.store, "default", "vol1")!.ControllerRequired, true);
  c.store.close();
});
