/**
 * Keyed wake-ups of blocked jobs (scheduler/blocked_wait.ts, blocked_set.ts): what a pass's
 * failures say a job waits for, which writes match it, and through a real scheduler and store that
 * a node registration passes by a job blocked on a volume's claim while the claim's release (or the
 * end of the alloc holding it) places it, and that a job waiting for a node is woken by one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import {
  allocVolumeWakes,
  nodeWake,
  signalsOf,
  volumeWake,
  waitOf,
  wakes,
  type WaitReader,
} from "../../../src/server/scheduler/blocked_wait.js";
import { BlockedSet } from "../../../src/server/scheduler/blocked_set.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { newAllocMetric, type AllocMetric } from "../../../src/structs/eval.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import type { Node } from "../../../src/structs/node.js";
import { csiJob, plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

const metric = (reasons: Record<string, number>, over: Partial<AllocMetric> = {}): AllocMetric => ({
  ...newAllocMetric({ dc1: 1 }),
  NodesEvaluated: 1,
  ConstraintFiltered: reasons,
  ...over,
});

const noStore: WaitReader = { getVolume: () => undefined, allocsByVolume: () => [] };
const withPlugin = (id: string, plugin = "p1", over: Partial<Node> = {}) =>
  makeNode(id, { CSINodePlugins: { [plugin]: nodePluginInfo(plugin) }, ...over });

test("blocked wait: each reason is classified by what can end it", () => {
  const claim = signalsOf(metric({ "CSI volume vol1 has exhausted its available writer claims": 3 }));
  assert.deepEqual(claim, {
    anyNode: false,
    nodePlugins: [],
    volumePlugins: [],
    volumes: ["vol1"],
    unschedulable: [],
  });
  const missing = signalsOf(metric({ "missing CSI Volume data[2]": 1 }));
  assert.deepEqual(missing.volumes, ["data[2]"]);
  assert.equal(missing.anyNode, false);
  const plugin = signalsOf(
    metric({ "CSI plugin p1 is missing from client n1": 1, "CSI plugin p1 is unhealthy on client n2": 1 }),
  );
  assert.deepEqual([plugin.anyNode, plugin.nodePlugins], [false, ["p1"]]);
  const full = signalsOf(metric({ "CSI plugin p1 has the maximum number of volumes on client n1": 1 }));
  assert.deepEqual([full.nodePlugins, full.volumePlugins], [["p1"], ["p1"]]);
  const unsched = signalsOf(metric({ "CSI volume v is unschedulable or is read-only": 1 }));
  assert.deepEqual([unsched.volumes, unsched.unschedulable], [["v"], ["v"]]);
  // Anything else, resources, or no node at all: any node may help.
  assert.equal(signalsOf(metric({ "${node.class} = fast": 2 })).anyNode, true);
  assert.equal(signalsOf(metric({ "did not meet topology requirement": 1 })).anyNode, true);
  assert.equal(signalsOf(metric({}, { NodesExhausted: 1 })).anyNode, true);
  assert.equal(signalsOf(metric({}, { NodesEvaluated: 0 })).anyNode, true);
  assert.equal(signalsOf(metric({})).anyNode, true, "a failure with no recorded reason");
});

test("blocked wait: a job blocked on a claim wakes on its volume and the claim's node, not on other nodes", () => {
  const job = csiJob("w", { source: "vol1" });
  const reader: WaitReader = {
    getVolume: (_ns, id) => (id === "vol1" ? makeVolume("vol1") : undefined),
    allocsByVolume: () => [{ NodeID: "holder", DesiredStatus: "run", ClientStatus: "running" } as never],
  };
  const wait = waitOf(
    job,
    [signalsOf(metric({ "CSI volume vol1 has exhausted its available writer claims": 1 }))],
    reader,
  );
  assert.equal(wakes(wait, nodeWake(withPlugin("fresh"))), false, "a new node, even with the plugin");
  assert.equal(wakes(wait, nodeWake(withPlugin("holder"))), true, "the node holding the claim");
  assert.equal(wakes(wait, volumeWake("default", "vol1", "p1")), true);
  assert.equal(wakes(wait, volumeWake("default", "vol2", "p1")), false);
  assert.equal(wakes(wait, volumeWake("other", "vol1", "p1")), false, "another namespace's volume");
  assert.equal(wakes(wait, { Kind: "all" }), true);
});

test("blocked wait: node waits are bounded by plugin and datacenter; per_alloc volumes match by source", () => {
  const job = { ...csiJob("w", { source: "data", perAlloc: true, count: 3 }), Datacenters: ["dc1*"] };
  const wait = waitOf(job, [signalsOf(metric({ "CSI plugin p2 is missing from client n1": 1 }))], noStore);
  assert.equal(wakes(wait, nodeWake(withPlugin("a", "p2", { Datacenter: "dc1-east" }))), true);
  assert.equal(wakes(wait, nodeWake(withPlugin("b", "p1", { Datacenter: "dc1" }))), false, "another plugin");
  assert.equal(wakes(wait, nodeWake(withPlugin("c", "p2", { Datacenter: "dc2" }))), false, "another dc");
  assert.equal(wakes(wait, volumeWake("default", "data[2]")), true);
  assert.equal(wakes(wait, volumeWake("default", "data")), false);
  const anyNode = waitOf(plainJob("p"), [signalsOf(metric({}, { NodesExhausted: 1 }))], noStore);
  assert.equal(wakes(anyNode, nodeWake(makeNode("z"))), true);
  assert.equal(wakes(anyNode, volumeWake("default", "vol1")), false, "a volume frees no CPU");
});

test("blocked wait: the failures of a per_alloc group are merged, not only the first alloc's", async () => {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  try {
    // data[0] does not exist (a volume wait); data[1]'s plugin runs on no node (a node wait).
    await store.txn((tx) => {
      tx.putNode(withPlugin("n1"));
      tx.putVolume(makeVolume("data[1]", { PluginID: "p2" }));
      tx.putJob(csiJob("w", { source: "data", perAlloc: true, count: 2 }));
    });
    const r = await scheduler.evaluate("default", "w");
    assert.equal(r.failures[0]?.missing, 2);
    const wait = waitOf(
      store.getJob("default", "w")!,
      r.failures.map((f) => f.signals ?? signalsOf(f.metrics)),
      store,
    );
    assert.equal(wakes(wait, nodeWake(withPlugin("n2", "p2"))), true, "the second alloc's plugin node");
  } finally {
    await scheduler.stop();
    store.close();
  }
});

/** A scheduler whose passes are counted, by job. */
async function counted(t: { after(fn: () => unknown): void }) {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  const passes = new Map<string, number>();
  const evaluate = scheduler.evaluate.bind(scheduler);
  scheduler.evaluate = (ns, id, ...rest) => {
    passes.set(id, (passes.get(id) ?? 0) + 1);
    return evaluate(ns, id, ...rest);
  };
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  return { store, scheduler, passes };
}

test("blocked wait: a node registration runs no pass of a job blocked on a claim; the claim's end places it", async (t) => {
  const { store, scheduler, passes } = await counted(t);
  await store.txn((tx) => {
    tx.putNode(withPlugin("n1"));
    tx.putVolume(makeVolume("vol1"));
    tx.putJob(csiJob("holder"));
    tx.putJob(csiJob("waiter"));
  });
  await scheduler.evaluate("default", "holder");
  const blocked = await scheduler.evaluate("default", "waiter");
  assert.equal(blocked.failures.length, 1);
  assert.ok(scheduler.isBlocked("default", "waiter"));
  passes.clear();

  const n2 = withPlugin("n2");
  await store.txn((tx) => tx.putNode(n2));
  await scheduler.retryBlocked([nodeWake(n2)]);
  await scheduler.retryBlocked([volumeWake("default", "unrelated", "p1")]);
  assert.equal(passes.get("waiter") ?? 0, 0, "no pass for writes that cannot unblock it");

  // The holder's alloc ends before it ever claimed (its proposed claim goes with it).
  const [held] = store.allocsByJob("default", "holder");
  const done = {
    ...held!,
    ClientStatus: "complete" as const,
    DesiredStatus: "stop" as const,
    ModifyTime: Date.now() * NS_PER_MS,
  };
  await store.txn((tx) => tx.putAlloc(done, { fromClient: true }));
  await scheduler.retryBlocked(allocVolumeWakes(done));
  assert.equal(passes.get("waiter"), 1);
  assert.equal(scheduler.isBlocked("default", "waiter"), false);
  assert.equal(store.allocsByJob("default", "waiter").filter((a) => a.DesiredStatus === "run").length, 1);
});

test("blocked wait: a job waiting for a node is woken by an eligible node, not by a volume", async (t) => {
  const { store, scheduler, passes } = await counted(t);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { SchedulingEligibility: "ineligible" }));
    tx.putJob(plainJob("web"));
  });
  await scheduler.evaluate("default", "web");
  assert.ok(scheduler.isBlocked("default", "web"));
  passes.clear();
  await scheduler.retryBlocked([volumeWake("default", "vol1", "p1")]);
  assert.equal(passes.get("web") ?? 0, 0);
  const n1 = await store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, SchedulingEligibility: "eligible" }));
  await scheduler.retryBlocked([nodeWake(n1)]);
  assert.equal(passes.get("web"), 1);
  assert.equal(scheduler.isBlocked("default", "web"), false);
});

test("blocked set: the lost wake-up guard looks only at matching wakes after the pass's read", () => {
  const set = new BlockedSet();
  const onVol1 = waitOf(csiJob("w"), [], noStore);
  const onVol2 = waitOf(csiJob("x", { source: "vol2" }), [], noStore);
  set.wake(10, [volumeWake("default", "vol1")]);
  set.takeDue();
  assert.equal(set.missed(9, onVol1), true, "a matching wake after the read");
  assert.equal(set.missed(10, onVol1), false, "the read saw it");
  assert.equal(set.missed(9, onVol2), false, "a wake for another volume");
  for (let i = 0; i < 1100; i++) set.wake(11 + i, [volumeWake("default", "other")]);
  assert.equal(set.missed(9, onVol2), true, "a read older than the log reaches counts as missed");
  set.set("k", { namespace: "default", id: "w" }, onVol1);
  assert.deepEqual(set.takeDue().due, [], "1,100 wakes for another volume make nothing due");
  set.wake(2000, [volumeWake("default", "vol1")]);
  assert.deepEqual(set.takeDue(), { due: [["k", { namespace: "default", id: "w" }]], nodeChanged: false });
});
