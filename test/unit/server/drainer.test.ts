import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { NodeDrainer } from "../../../src/server/drainer/drainer.js";
import { computePlan } from "../../../src/server/scheduler/plan.js";
import { MIGRATE_DESCRIPTION } from "../../../src/server/scheduler/plan_types.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateStore } from "../../../src/server/state/store.js";
import { nullLogger } from "../../../src/internal/log.js";
import { applyDrainRequest, applyEligibility, isDraining } from "../../../src/structs/node.js";
import { csiJob, pluginJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";
import { claimOf } from "../../builders/claim.js";

const withPlugin = (id: string) => makeNode(id, { CSINodePlugins: { p1: nodePluginInfo("p1") } });

async function cluster() {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(withPlugin("A"));
    tx.putNode(withPlugin("B"));
    tx.putVolume(makeVolume("vol1"));
  });
  return { store, scheduler: new Scheduler(store, nullLogger) };
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(10);
  }
}

const drainSpec = (Deadline = 0, IgnoreSystemJobs = false) => ({
  DrainSpec: { Deadline, IgnoreSystemJobs },
  MarkEligible: false,
  Meta: {},
});

test("reconciler: an alloc marked for migration is stopped and replaced on an eligible node", async () => {
  const { store, scheduler } = await cluster();
  await store.txn((tx) => tx.putJob(csiJob("web")));
  await store.txn((tx) => tx.putNode(applyEligibility(tx.getNode("B")!, "ineligible")));
  await scheduler.evaluate("default", "web");
  const [first] = store.allocsByJob("default", "web");
  assert.equal(first!.NodeID, "A");
  await store.txn((tx) => {
    tx.putNode(applyEligibility(tx.getNode("B")!, "eligible"));
    tx.putNode(applyDrainRequest(tx.getNode("A")!, drainSpec(), Date.now()));
    tx.putAlloc({
      ...tx.getAlloc(first!.ID)!,
      ClientStatus: "pending",
      DesiredTransition: { Migrate: true },
    });
  });
  const plan = computePlan(store, store.getJob("default", "web")!, 1);
  assert.deepEqual(
    plan.stop.map((s) => [s.alloc.ID, s.description]),
    [[first!.ID, MIGRATE_DESCRIPTION]],
  );
  assert.deepEqual(
    plan.place.map((a) => [a.Name, a.NodeID]),
    [["web.g[0]", "B"]],
    "the replacement goes to B (A is ineligible)",
  );
});

test("reconciler: a system alloc stopped by a drain is not moved; it comes back once its node is eligible again", async () => {
  const { store, scheduler } = await cluster();
  await store.txn((tx) => tx.putJob(pluginJob("nodes")));
  await store.txn((tx) => tx.putNode(applyEligibility(tx.getNode("B")!, "ineligible")));
  await scheduler.evaluate("default", "nodes");
  const [first] = store.allocsByJob("default", "nodes");
  assert.equal(first!.NodeID, "A");
  assert.equal(store.allocsByJob("default", "nodes").length, 1, "none on the ineligible B");
  await store.txn((tx) => {
    tx.putNode(applyEligibility(tx.getNode("B")!, "eligible"));
    tx.putNode(applyDrainRequest(tx.getNode("A")!, drainSpec(), Date.now()));
    tx.putAlloc({ ...tx.getAlloc(first!.ID)!, DesiredTransition: { Migrate: true } });
  });
  const r = await scheduler.evaluate("default", "nodes");
  assert.deepEqual([r.stopped, r.placed, r.failures.length], [1, 1, 0], "stopped; B gets its own");
  const onB = store.allocsByJob("default", "nodes").filter((a) => a.DesiredStatus === "run");
  assert.deepEqual(
    onB.map((a) => [a.Name, a.NodeID, a.PreviousAllocation ?? ""]),
    [["nodes.g[0]", "B", ""]],
    "B's own slot, not the drained alloc moved",
  );
  assert.equal(scheduler.isBlocked("default", "nodes"), false);
  await store.txn((tx) =>
    tx.putNode({ ...tx.getNode("A")!, DrainStrategy: null, SchedulingEligibility: "eligible" }),
  );
  await scheduler.evaluate("default", "nodes");
  const live = store.allocsByJob("default", "nodes").filter((a) => a.DesiredStatus === "run");
  assert.deepEqual(
    live.map((a) => a.NodeID).sort(),
    ["A", "B"],
    "placed again on A once its node is eligible",
  );
});

/** The store as the drainer sees it, counting cluster-wide alloc and volume scans. */
function counting(store: StateStore) {
  const calls = { listAllocs: 0, listVolumes: 0 };
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "listAllocs" || prop === "listVolumes") calls[prop]++;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { proxy, calls };
}

test("drainer: service alloc first, the node plugin after the claim is freed, then complete", async (t) => {
  const { store, scheduler } = await cluster();
  await store.txn((tx) => {
    tx.putJob(csiJob("web"));
    tx.putJob(pluginJob("nodes", { node: "A" }));
    tx.putNode(applyEligibility(tx.getNode("B")!, "ineligible"));
  });
  await scheduler.evaluate("default", "web");
  await scheduler.evaluate("default", "nodes");
  const web = store.allocsByJob("default", "web")[0]!;
  const plugin = store.allocsByJob("default", "nodes")[0]!;
  assert.deepEqual([web.NodeID, plugin.NodeID], ["A", "A"]);
  await store.txn((tx) => {
    tx.putNode(applyEligibility(tx.getNode("B")!, "eligible"));
    for (const a of [web, plugin]) tx.putAlloc({ ...tx.getAlloc(a.ID)!, ClientStatus: "running" });
    const vol = tx.getVolume("default", "vol1")!;
    tx.putVolume({ ...vol, AccessMode: "single-node-writer", WriteClaims: { [web.ID]: claimOf(web) } });
  });

  const { proxy, calls } = counting(store);
  const drainer = new NodeDrainer(proxy, scheduler, nullLogger, { settleMs: 5 });
  drainer.start();
  t.after(() => drainer.stop());
  await store.txn((tx) => tx.putNode(applyDrainRequest(tx.getNode("A")!, drainSpec(), Date.now())));

  await until("the service alloc to be stopped", () =>
    store.getAlloc(web.ID)!.DesiredStatus === "stop" ? true : undefined,
  );
  assert.equal(store.getAlloc(web.ID)!.DesiredTransition?.Migrate, true);
  assert.equal(store.getNode("A")!.SchedulingEligibility, "ineligible");
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(web.ID)!, ClientStatus: "complete" }));
  await tick(100);
  assert.equal(store.getAlloc(plugin.ID)!.DesiredStatus, "run", "the claim still holds the plugin");
  assert.equal(
    store.allocsByJob("default", "web").filter((a) => a.DesiredStatus === "run").length,
    0,
    "the replacement waits for the single-node-writer claim too",
  );

  await store.txn((tx) => {
    const vol = tx.getVolume("default", "vol1")!;
    tx.putVolume({ ...vol, AccessMode: "", WriteClaims: {} });
  });
  await scheduler.retryBlocked();
  await until("the plugin alloc to be stopped", () =>
    store.getAlloc(plugin.ID)!.DesiredStatus === "stop" ? true : undefined,
  );
  const replacement = store.allocsByJob("default", "web").find((a) => a.DesiredStatus === "run");
  assert.equal(replacement?.NodeID, "B");
  assert.equal(
    store.allocsByJob("default", "nodes").filter((a) => a.DesiredStatus === "run").length,
    0,
    "the node plugin is not moved to B",
  );
  assert.equal(isDraining(store.getNode("A")!), true, "the plugin has not stopped yet");
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(plugin.ID)!, ClientStatus: "complete" }));
  await until("the drain to complete", () => (isDraining(store.getNode("A")!) ? undefined : true));
  const a = store.getNode("A")!;
  assert.equal(a.SchedulingEligibility, "ineligible");
  assert.equal(a.LastDrain?.Status, "complete");
  assert.deepEqual(calls, { listAllocs: 0, listVolumes: 0 }, "the drainer never scans the cluster");
});

test("drainer: resumes a drain found in the store and forces it at the deadline", async (t) => {
  const { store, scheduler } = await cluster();
  await store.txn((tx) => {
    tx.putJob(csiJob("web"));
    tx.putJob(pluginJob("nodes", { node: "A" }));
    tx.putNode(applyEligibility(tx.getNode("B")!, "ineligible"));
  });
  await scheduler.evaluate("default", "web");
  await scheduler.evaluate("default", "nodes");
  const web = store.allocsByJob("default", "web")[0]!;
  assert.equal(web.NodeID, "A");
  await store.txn((tx) => {
    tx.putNode(applyEligibility(tx.getNode("B")!, "eligible"));
    const vol = tx.getVolume("default", "vol1")!;
    tx.putVolume({ ...vol, AccessMode: "single-node-writer", WriteClaims: { [web.ID]: claimOf(web) } });
    for (const a of tx.allocsByNode("A")) tx.putAlloc({ ...a, ClientStatus: "running" });
    tx.putNode(applyDrainRequest(tx.getNode("A")!, drainSpec(300e6), Date.now()));
  });
  const drainer = new NodeDrainer(store, scheduler, nullLogger, { settleMs: 5 });
  drainer.start();
  t.after(() => drainer.stop());
  await until("the service alloc to be stopped", () =>
    store.getAlloc(web.ID)!.DesiredStatus === "stop" ? true : undefined,
  );
  assert.ok(
    store.allocsByNode("A").some((a) => a.JobID === "nodes" && a.DesiredStatus === "run"),
    "before the deadline the plugin waits",
  );
  await until("the deadline to stop the plugin and complete the drain", () =>
    isDraining(store.getNode("A")!) ? undefined : true,
  );
  assert.ok(store.allocsByNode("A").every((a) => a.DesiredStatus === "stop"));
  assert.equal(store.getNode("A")!.LastDrain?.Status, "complete");
});

test("drainer: follows the nodes written since its last pass, reading every node only on its first", async (t) => {
  const { store, scheduler } = await cluster();
  let listed = 0;
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (prop === "listNodes") listed++;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const drainer = new NodeDrainer(counted, scheduler, nullLogger, { settleMs: 5 });
  drainer.start();
  t.after(() => drainer.stop());
  await until("the first pass", () => (listed > 0 ? true : undefined));
  // A burst of node writes, among them a drain on an empty node and one on a node then deleted.
  for (let i = 0; i < 20; i++) await store.txn((tx) => tx.putNode(makeNode(`x${i}`)));
  await store.txn((tx) => {
    tx.putNode(applyDrainRequest(makeNode("C"), drainSpec(), Date.now()));
    tx.putNode(applyDrainRequest(makeNode("D"), drainSpec(), Date.now()));
  });
  await store.txn((tx) => tx.deleteNode("D"));
  await until("C's drain to complete", () => (isDraining(store.getNode("C")!) ? undefined : true));
  assert.equal(store.getNode("C")!.LastDrain?.Status, "complete");
  assert.equal(listed, 1, "only the first pass read every node");
});
