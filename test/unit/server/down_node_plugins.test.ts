/**
 * The bound after which a down node's plugin instances leave the plugin records
 * (detachDownNodePlugins, HeartbeatMonitor): not before the bound, once after it, kept across a
 * server restart (the bound runs from the node's StatusUpdatedAt), and undone by the node's return.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { HeartbeatMonitor } from "../../../src/server/heartbeat.js";
import { detachDownNodePlugins, markNodeDown } from "../../../src/server/node_loss.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { markNodeReady } from "../../../src/structs/node.js";
import { buildPlugin, instanceOnNode } from "../../../src/structs/plugin.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";

test("detachDownNodePlugins: only a node down for the bound, once; a ready node brings them back", async () => {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putNode(makeNode("A", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } }));
    tx.putNode(makeNode("B", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
  });
  assert.equal(await s.txn((tx) => detachDownNodePlugins(tx, "A", 10_000, 1000)), false, "A is up");
  await s.txn((tx) => markNodeDown(tx, "A", 5000, "down"));
  assert.equal(await s.txn((tx) => detachDownNodePlugins(tx, "A", 5999, 1000)), false, "not yet");
  assert.ok(s.getPlugin("p1")!.Controllers.A);
  assert.equal(await s.txn((tx) => detachDownNodePlugins(tx, "A", 6000, 1000)), true);
  assert.equal(s.getPlugin("p1")!.Controllers.A, undefined);
  assert.deepEqual(Object.keys(s.getPlugin("p1")!.Nodes), ["B"], "other nodes' instances stay");
  assert.ok(s.getNode("A")!.CSIControllerPlugins.p1, "the node keeps its fingerprint");
  assert.equal(await s.txn((tx) => detachDownNodePlugins(tx, "A", 9000, 1000)), false, "once");
  assert.equal(await s.txn((tx) => detachDownNodePlugins(tx, "gone", 9000, 1000)), false);

  await s.txn((tx) => tx.putNode(markNodeReady(tx.getNode("A")!, 10_000)));
  assert.equal(s.getNode("A")!.CSIPluginsDetachedAt, undefined);
  assert.equal(s.getPlugin("p1")!.Controllers.A!.Healthy, true);
  assert.equal(s.getPlugin("p1")!.ControllerRequired, true);
  s.close();
});

test("heartbeat monitor: a server that starts with a node down past the bound detaches at once", async () => {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putNode(makeNode("A", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } }));
    markNodeDown(tx, "A", Date.now() - 60_000, "down");
  });
  assert.ok(s.getPlugin("p1")!.Controllers.A);
  const hb = new HeartbeatMonitor(s, { evaluate: () => Promise.resolve() }, 60_000, nullLogger, 30_000);
  hb.start();
  for (let i = 0; i < 200 && s.getPlugin("p1")?.Controllers.A; i++) await sleep(10);
  await hb.stop();
  const p = s.getPlugin("p1");
  assert.equal(p?.Controllers.A, undefined, JSON.stringify(p));
  s.close();
});

test("buildPlugin: a down node's instance never makes the plugin require ControllerPublish", () => {
  const attach = controllerInfo("p1", true);
  const build = (status: "ready" | "down") =>
    buildPlugin("p1", [{ nodeId: "A", controller: instanceOnNode(attach, status) }], [], {
      CreateIndex: 1,
      ModifyIndex: 1,
    });
  assert.equal(build("ready").ControllerRequired, true);
  assert.equal(build("down").ControllerRequired, false);
  // An unhealthy controller on a live node (restarting) still speaks for the plugin.
  const restarting = buildPlugin("p1", [{ nodeId: "A", controller: { ...attach, Healthy: false } }], [], {
    CreateIndex: 1,
    ModifyIndex: 1,
  });
  assert.deepEqual([restarting.ControllerRequired, restarting.ControllersHealthy], [true, 0]);
});
