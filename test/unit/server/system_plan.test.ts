/**
 * System and sysbatch jobs through the real Scheduler on a real store: one alloc per eligible node,
 * Nomad's system placement failures (an infeasible node is no failure unless no node takes the
 * group; a node without room is), the index of system jobs that a node change re-evaluates, and
 * big passes in batches.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { Job } from "../../../src/structs/job.js";
import type { Node } from "../../../src/structs/node.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

async function setup(t: { after: (fn: () => Promise<void> | void) => void }, nodes: Node[]) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => nodes.forEach((n) => tx.putNode(n)));
  const scheduler = new Scheduler(store, nullLogger);
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  return { store, scheduler };
}

const live = (store: SqliteStateStore, id: string) =>
  store
    .allocsByJob("default", id)
    .filter((a) => a.DesiredStatus === "run")
    .map((a) => [a.NodeID, a.Name])
    .sort();

const small = (id: string) =>
  makeNode(id, {
    NodeResources: {
      Cpu: { CpuShares: 100, TotalCpuCores: 1, ReservableCpuCores: [] },
      Memory: { MemoryMB: 64 },
      Disk: { DiskMB: 1000 },
    },
  });

test("system: one alloc on every eligible node; a node missing the driver is skipped, not a failure", async (t) => {
  const { store, scheduler } = await setup(t, [makeNode("a"), makeNode("b"), makeNode("c", { Drivers: {} })]);
  await store.txn((tx) => tx.putJob(plainJob("sys", "system")));
  const r = await scheduler.evaluate("default", "sys");
  assert.deepEqual([r.placed, r.failures.length], [2, 0]);
  assert.deepEqual(live(store, "sys"), [
    ["a", "sys.g[0]"],
    ["b", "sys.g[0]"],
  ]);
  assert.equal(scheduler.isBlocked("default", "sys"), false);
  assert.equal(store.getJob("default", "sys")!.Status, "running");
});

test("system: a group no node can run is a failure with the merged filter counts, and blocked", async (t) => {
  const { store, scheduler } = await setup(t, [makeNode("a"), makeNode("b")]);
  const job: Job = plainJob("sys", "system");
  job.Constraints = [{ LTarget: "${node.class}", RTarget: "gpu", Operand: "=" }];
  await store.txn((tx) => tx.putJob(job));
  const r = await scheduler.evaluate("default", "sys");
  assert.equal(r.placed, 0);
  assert.equal(r.failures.length, 1);
  const f = r.failures[0]!;
  assert.deepEqual(
    [f.group, f.missing, f.metrics.NodesEvaluated, f.metrics.NodesFiltered, f.metrics.ConstraintFiltered],
    ["g", 2, 2, 2, { "${node.class} = gpu": 2 }],
  );
  assert.equal(scheduler.isBlocked("default", "sys"), true);
});

test("system: a feasible node without room is a failure (coalesced), the others still get theirs", async (t) => {
  const { store, scheduler } = await setup(t, [makeNode("a"), small("tiny1"), small("tiny2")]);
  const job: Job = plainJob("sys", "system");
  job.TaskGroups[0]!.Tasks[0]!.Resources = { ...job.TaskGroups[0]!.Tasks[0]!.Resources, MemoryMB: 512 };
  await store.txn((tx) => tx.putJob(job));
  const r = await scheduler.evaluate("default", "sys");
  assert.equal(r.placed, 1);
  assert.equal(r.failures.length, 1);
  const f = r.failures[0]!;
  assert.deepEqual(
    [f.missing, f.metrics.CoalescedFailures, f.metrics.NodesExhausted, f.metrics.DimensionExhausted],
    [2, 1, 1, { memory: 1 }],
  );
  assert.deepEqual(live(store, "sys"), [["a", "sys.g[0]"]]);
});

test("system: node changes re-evaluate the indexed system jobs: a new node gets its alloc", async (t) => {
  const { store, scheduler } = await setup(t, [makeNode("a")]);
  await store.txn((tx) => {
    tx.putJob(plainJob("sys", "system"));
    tx.putJob(plainJob("once", "sysbatch"));
    tx.putJob(plainJob("web", "service"));
  });
  for (const id of ["sys", "once", "web"]) await scheduler.evaluate("default", id);
  assert.equal(scheduler.systemJobCount, 2, "the service job is not indexed");
  await store.txn((tx) => tx.putNode(makeNode("b")));
  const evalsBefore = store.evalsByJob("default", "web").length;
  await scheduler.retryBlocked();
  assert.deepEqual(live(store, "sys"), [
    ["a", "sys.g[0]"],
    ["b", "sys.g[0]"],
  ]);
  assert.deepEqual(live(store, "once"), [
    ["a", "once.g[0]"],
    ["b", "once.g[0]"],
  ]);
  assert.equal(store.evalsByJob("default", "web").length, evalsBefore, "the service job had no pass");
  // Nothing more to do: a round records no eval for the system jobs (quiet passes).
  const sysEvals = store.evalsByJob("default", "sys").length;
  await scheduler.retryBlocked();
  assert.equal(store.evalsByJob("default", "sys").length, sysEvals);

  await store.txn((tx) => tx.putJob({ ...tx.getJob("default", "sys")!, Stop: true }));
  await scheduler.evaluate("default", "sys", "job-deregister");
  assert.equal(scheduler.systemJobCount, 1, "a stopped job leaves the index");
  scheduler.standDown();
  assert.equal(scheduler.systemJobCount, 0, "a new term rebuilds it");
  await scheduler.evaluateAll();
  assert.equal(scheduler.systemJobCount, 1);
});

test("sysbatch: runs once on each node; a complete alloc is not run again; the job ends dead", async (t) => {
  const { store, scheduler } = await setup(t, [makeNode("a"), makeNode("b")]);
  await store.txn((tx) => tx.putJob(plainJob("once", "sysbatch")));
  await scheduler.evaluate("default", "once");
  const allocs = store.allocsByJob("default", "once");
  assert.equal(allocs.length, 2);
  await store.txn((tx) => {
    for (const a of allocs)
      tx.putAlloc({ ...tx.getAlloc(a.ID)!, ClientStatus: "complete" }, { fromClient: true });
  });
  const r = await scheduler.evaluate("default", "once", "node-update");
  assert.deepEqual([r.placed, r.stopped], [0, 0]);
  assert.equal(store.getJob("default", "once")!.Status, "dead");
});

test("system: a pass over many nodes is applied in batches and places every node once", async (t) => {
  const nodes = Array.from({ length: 1200 }, (_, i) => makeNode(`n${String(i).padStart(4, "0")}`));
  const { store, scheduler } = await setup(t, nodes);
  await store.txn((tx) => tx.putJob(plainJob("sys", "system")));
  const r = await scheduler.evaluate("default", "sys");
  assert.equal(r.placed, 1200);
  const byNode = new Set(store.allocsByJob("default", "sys").map((a) => a.NodeID));
  assert.equal(byNode.size, 1200);
  assert.equal(store.evalsByJob("default", "sys").length, 1, "one eval for the whole pass");
});
