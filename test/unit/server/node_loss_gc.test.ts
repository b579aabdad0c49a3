/**
 * Node loss (a down node's unfinished allocs become lost and are replaced; lost is final) and the
 * garbage collector's decisions and pass, over an in-memory store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { NodeConnections } from "../../../src/server/clientconn/connections.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { allocCollectable, nodeCollectable } from "../../../src/server/gc/decide.js";
import { DEFAULT_GC_OPTIONS, GarbageCollector } from "../../../src/server/gc/collector.js";
import { HeartbeatMonitor } from "../../../src/server/heartbeat.js";
import { markNodeDown } from "../../../src/server/node_loss.js";
import { NodeEndpoint } from "../../../src/server/rpc/node.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import { csiJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

/** A pass that removed nothing. */
const NOTHING = { jobs: [], allocs: [], nodes: [], plugins: [], evals: [], deployments: [] };

const withPlugin = (id: string) => makeNode(id, { CSINodePlugins: { p1: nodePluginInfo("p1") } });

async function placedOn(nodeId: string) {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  await store.txn((tx) => {
    tx.putNode(withPlugin(nodeId));
    tx.putVolume(makeVolume("vol1"));
    tx.putJob(csiJob("j"));
  });
  await scheduler.evaluate("default", "j");
  const alloc = store.allocsByJob("default", "j")[0]!;
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(alloc.ID)!, ClientStatus: "running" }));
  return { store, scheduler, alloc };
}

test("node loss: the node goes down and its unfinished allocs are lost, once", async () => {
  const { store, alloc } = await placedOn("n1");
  const loss = await store.txn((tx) => markNodeDown(tx, "n1", 1234, "node missed its heartbeat"));
  assert.deepEqual(loss, { jobs: [{ namespace: "default", id: "j" }], nextExpiryMs: undefined });
  const node = store.getNode("n1")!;
  assert.equal(node.Status, "down");
  assert.equal(node.StatusUpdatedAt, 1234);
  const a = store.getAlloc(alloc.ID)!;
  assert.deepEqual([a.ClientStatus, a.DesiredStatus], ["lost", "stop"]);
  const index = store.index();
  assert.equal(await store.txn((tx) => markNodeDown(tx, "n1", 5678, "again")), null);
  assert.equal(store.index(), index, "marking a down node down again writes nothing");
  store.close();
});

test("node loss: heartbeat expiry re-evaluates the job, whose replacement waits for the volume", async () => {
  const { store, scheduler, alloc } = await placedOn("n1");
  await store.txn((tx) => tx.putNode(withPlugin("n2")));
  const hb = new HeartbeatMonitor(store, scheduler, 40, nullLogger, undefined, { failoverMs: 0 });
  hb.start();
  // n2 heartbeats; n1 stays silent past its TTL.
  const deadline = Date.now() + 1000;
  while (store.getNode("n1")!.Status !== "down" && Date.now() < deadline) {
    await tick(5);
    hb.reset("n2");
  }
  await tick(5);
  await hb.stop();
  assert.equal(store.getNode("n1")!.Status, "down");
  assert.equal(store.getNode("n2")!.Status, "ready");
  assert.equal(store.getAlloc(alloc.ID)!.ClientStatus, "lost");
  // The lost alloc has not claimed vol1 here, so the replacement is placed at once on n2.
  const live = store.allocsByJob("default", "j").filter((a) => a.DesiredStatus === "run");
  assert.deepEqual(
    live.map((a) => [a.NodeID, a.Name]),
    [["n2", "j.g[0]"]],
  );
  store.close();
});

test("node loss: a node that comes back cannot make a lost alloc live again", async () => {
  const { store, scheduler, alloc } = await placedOn("n1");
  await store.txn((tx) => markNodeDown(tx, "n1", Date.now(), "down"));
  const deps = {
    store,
    scheduler,
    conns: new NodeConnections(),
    controllers: new ControllerClient(store, new NodeConnections(), nullLogger),
    volumeLocks: new KeyedMutex(),
    log: nullLogger,
  };
  const hb = new HeartbeatMonitor(store, scheduler, 60_000, nullLogger);
  const ep = new NodeEndpoint(deps, hb);
  await ep.heartbeat({ NodeID: "n1" });
  await hb.stop();
  assert.equal(store.getNode("n1")!.Status, "ready", "the node is ready again");
  await ep.updateAllocs({
    NodeID: "n1",
    Allocs: [{ ID: alloc.ID, ClientStatus: "running", ClientDescription: "still here", TaskStates: {} }],
  });
  const a = store.getAlloc(alloc.ID)!;
  assert.deepEqual([a.ClientStatus, a.DesiredStatus], ["lost", "stop"]);
  const mine = await ep.getAllocs({ NodeID: "n1", MinIndex: 0, WaitMs: 0 }, new AbortController().signal);
  assert.equal(
    mine.Allocs.find((x) => x.ID === alloc.ID)?.DesiredStatus,
    "stop",
    "the agent is told to stop it",
  );
  store.close();
});

const ms = (n: number) => n * NS_PER_MS;

test("gc decisions: allocs", () => {
  const now = 10_000_000;
  const old = { ClientStatus: "complete", DesiredStatus: "stop", ModifyTime: ms(now - 5000) } as const;
  assert.equal(allocCollectable(old, { Stop: true }, false, now, 1000), true, "stopped job");
  assert.equal(allocCollectable(old, undefined, false, now, 1000), true, "purged job");
  assert.equal(allocCollectable(old, { Stop: false }, false, now, 1000), false, "live job keeps it");
  assert.equal(allocCollectable(old, { Stop: true }, true, now, 1000), false, "still holds a claim");
  assert.equal(allocCollectable(old, { Stop: true }, false, now, 10_000), false, "too young");
  const lost = { ...old, ClientStatus: "lost" } as const;
  assert.equal(allocCollectable(lost, { Stop: false }, false, now, 1000), true, "lost: replaced");
  const live = { ...old, ClientStatus: "running" } as const;
  assert.equal(allocCollectable(live, undefined, false, now, 1000), false, "not terminal");
});

test("gc decisions: nodes", () => {
  const now = 100_000;
  const gone = { Status: "down", StatusUpdatedAt: now - 5000 } as const;
  assert.equal(nodeCollectable(gone, [], now, 1000), true);
  assert.equal(nodeCollectable(gone, [], now, 10_000), false, "down, but not for long enough");
  assert.equal(nodeCollectable({ ...gone, Status: "ready" }, [], now, 1000), false);
  assert.equal(
    nodeCollectable(gone, [{ ClientStatus: "running", DesiredStatus: "run" }], now, 1000),
    false,
    "still has an unfinished alloc",
  );
});

test("gc pass: removes freed allocs of stopped jobs and down nodes (with their plugin instances)", async () => {
  const { store, scheduler, alloc } = await placedOn("n1");
  await store.txn((tx) => tx.putNode(withPlugin("n2")));
  await store.txn((tx) => tx.putJob({ ...tx.getJob("default", "j")!, Stop: true }));
  await scheduler.evaluate("default", "j");
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(alloc.ID)!, ClientStatus: "complete" }));
  // Still claimed: the alloc stays until its claim is freed.
  await store.txn((tx) =>
    tx.putVolume({
      ...tx.getVolume("default", "vol1")!,
      PastClaims: {
        [alloc.ID]: {
          AllocationID: alloc.ID,
          NodeID: "n1",
          ExternalNodeID: "",
          Mode: "write",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
          State: "node-detached",
        },
      },
    }),
  );
  await store.txn((tx) => markNodeDown(tx, "n2", 0, "down"));
  const gc = new GarbageCollector(store, nullLogger, { allocThresholdMs: 0, nodeThresholdMs: 1000 });
  const later = Date.now() + 10;
  assert.deepEqual(await gc.collect(later), { ...NOTHING, nodes: ["n2"] });
  assert.equal(store.getNode("n2"), undefined);
  assert.deepEqual(Object.keys(store.getPlugin("p1")!.Nodes), ["n1"], "n2's plugin instance went with it");
  await store.txn((tx) => tx.putVolume({ ...tx.getVolume("default", "vol1")!, PastClaims: {} }));
  assert.deepEqual(await gc.collect(later), { ...NOTHING, allocs: [alloc.ID] });
  assert.equal(store.getAlloc(alloc.ID), undefined);
  assert.deepEqual(store.allocsByVolume("default", "vol1"), []);
  assert.ok(DEFAULT_GC_OPTIONS.intervalMs >= 60_000, "default interval is not aggressive");
  store.close();
});
