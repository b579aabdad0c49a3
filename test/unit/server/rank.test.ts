/**
 * Ranking and resources through the real Scheduler over an in-memory SQLite store: binpack,
 * affinity, spread, distinct_hosts, distinct_property, exhausted dimensions, missing drivers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { Constraint } from "../../../src/structs/constraint.js";
import type { Job, TaskGroup } from "../../../src/structs/job.js";
import type { Node, NodeResources } from "../../../src/structs/node.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

/** 4 cores × 1000 MHz, `mem` MiB. */
const resources = (mem = 4096, cores = 4): NodeResources => ({
  Cpu: { CpuShares: cores * 1000, TotalCpuCores: cores, ReservableCpuCores: [...Array(cores).keys()] },
  Memory: { MemoryMB: mem },
  Disk: { DiskMB: 100_000 },
});

const node = (id: string, over: Partial<Node> = {}) => makeNode(id, { NodeResources: resources(), ...over });

function job(id: string, count: number, group: Partial<TaskGroup> = {}, top: Partial<Job> = {}): Job {
  const j = plainJob(id);
  const g = { ...j.TaskGroups[0]!, Count: count, ...group };
  return { ...j, ...top, TaskGroups: [g] };
}

async function schedule(nodes: Node[], ...jobs: Job[]) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => nodes.forEach((n) => tx.putNode(n)));
  const scheduler = new Scheduler(store, nullLogger);
  const results = [];
  for (const j of jobs) {
    await store.txn((tx) => tx.putJob(j));
    results.push(await scheduler.evaluate("default", j.ID));
  }
  const placed = (id: string) => store.allocsByJob("default", id).filter((a) => a.DesiredStatus === "run");
  return { store, results, placed, last: results.at(-1)! };
}

const byNode = (allocs: { NodeID: string }[]) => {
  const out: Record<string, number> = {};
  for (const a of allocs) out[a.NodeID] = (out[a.NodeID] ?? 0) + 1;
  return out;
};

test("rank: binpack puts a new job's alloc on the fuller node", async () => {
  // `a` first in order: without binpack a tie would pick it; the fuller `b` must win.
  const { placed } = await schedule(
    [node("a"), node("b")],
    job("first", 1, { Constraints: [{ LTarget: "${node.unique.id}", Operand: "=", RTarget: "b" }] }),
    job("second", 1),
  );
  assert.equal(placed("first")[0]!.NodeID, "b");
  assert.equal(placed("second")[0]!.NodeID, "b", "binpack prefers the node already in use");
});

test("rank: allocs of one group spread over nodes (job anti-affinity)", async () => {
  const { placed } = await schedule([node("a"), node("b")], job("j", 4));
  assert.deepEqual(byNode(placed("j")), { a: 2, b: 2 });
});

test("rank: placed allocs carry AllocatedResources with Nomad's defaults", async () => {
  const j = job("j", 1);
  j.TaskGroups[0]!.Tasks[0]!.Resources = { MemoryMB: 512, MemoryMaxMB: 1024 };
  const { placed } = await schedule([node("a")], j);
  assert.deepEqual(placed("j")[0]!.AllocatedResources, {
    Tasks: {
      [j.TaskGroups[0]!.Tasks[0]!.Name]: {
        Cpu: { CpuShares: 100, ReservedCores: null },
        Memory: { MemoryMB: 512, MemoryMaxMB: 1024 },
      },
    },
    Shared: { DiskMB: 300 },
  });
});

test("rank: a group bigger than any node is exhausted on memory, in Nomad's metric", async () => {
  const j = job("big", 1);
  j.TaskGroups[0]!.Tasks[0]!.Resources = { MemoryMB: 5000 };
  const { last, placed } = await schedule([node("a"), node("b", { NodeClass: "c1" })], j);
  assert.equal(placed("big").length, 0);
  const m = last.failures[0]!.metrics;
  assert.equal(m.NodesEvaluated, 2);
  assert.equal(m.NodesFiltered, 0);
  assert.equal(m.NodesExhausted, 2);
  assert.deepEqual(m.DimensionExhausted, { memory: 2 });
  assert.deepEqual(m.ClassExhausted, { c1: 1 });
});

test("rank: reserved resources and allocs placed earlier in the plan count against the node", async () => {
  const j = job("j", 3);
  j.TaskGroups[0]!.Tasks[0]!.Resources = { CPU: 1000, MemoryMB: 1000 };
  const reserved = { Cpu: { CpuShares: 0 }, Memory: { MemoryMB: 1500 }, Disk: { DiskMB: 0 } };
  // 4096 − 1500 = 2596 MiB: two allocs of 1000 fit, the third does not.
  const { last, placed } = await schedule([node("a", { ReservedResources: reserved })], j);
  assert.equal(placed("j").length, 2);
  assert.deepEqual(last.failures[0]!.metrics.DimensionExhausted, { memory: 1 });
  const cpu = job("cpu", 1);
  cpu.TaskGroups[0]!.Tasks[0]!.Resources = { CPU: 5000 };
  const r2 = await schedule([node("a")], cpu);
  assert.deepEqual(r2.last.failures[0]!.metrics.DimensionExhausted, { cpu: 1 });
});

test("rank: cores are handed out whole and exhausted as Nomad's 'cores'", async () => {
  const j = job("j", 3);
  j.TaskGroups[0]!.Tasks[0]!.Resources = { Cores: 2, MemoryMB: 10 };
  const { last, placed } = await schedule([node("a")], j);
  const got = placed("j").map((a) => Object.values(a.AllocatedResources!.Tasks)[0]!.Cpu);
  assert.deepEqual(got.map((c) => c.ReservedCores).sort(), [
    [0, 1],
    [2, 3],
  ]);
  assert.deepEqual(got[0]!.CpuShares, 2000, "a core's share of the node's MHz");
  assert.deepEqual(last.failures[0]!.metrics.DimensionExhausted, { cores: 1 });
});

test("rank: a node without NodeResources (an old record) is not bin-packed", async () => {
  const j = job("j", 1);
  j.TaskGroups[0]!.Tasks[0]!.Resources = { MemoryMB: 1_000_000 };
  const { placed } = await schedule([makeNode("old")], j);
  assert.equal(placed("j")[0]!.NodeID, "old");
});

test("rank: affinity prefers the matching node; a negative weight avoids it", async () => {
  const nodes = [node("a", { Meta: { rack: "r1" } }), node("b", { Meta: { rack: "r2" } })];
  const prefer = job("p", 1, {
    Affinities: [{ LTarget: "${meta.rack}", Operand: "=", RTarget: "r2", Weight: 50 }],
  });
  const avoid = job(
    "v",
    1,
    {},
    { Affinities: [{ LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: -50 }] },
  );
  const { placed } = await schedule(nodes, prefer, avoid);
  assert.equal(placed("p")[0]!.NodeID, "b");
  assert.equal(placed("v")[0]!.NodeID, "b");
});

test("rank: spread with targets splits 50/50 over two racks", async () => {
  // Two nodes per rack: without the spread, the second alloc would go to a1 (same rack, first in order).
  const nodes = ["a1", "a2", "b1", "b2"].map((id) =>
    node(id, { Meta: { rack: id[0] === "a" ? "r1" : "r2" } }),
  );
  const spread = {
    Attribute: "${meta.rack}",
    Weight: 100,
    SpreadTarget: [
      { Value: "r1", Percent: 50 },
      { Value: "r2", Percent: 50 },
    ],
  };
  const { placed, store } = await schedule(
    nodes,
    job("s", 2, { Spreads: [spread] }),
    job("e", 4, {}, { Spreads: [{ ...spread, SpreadTarget: [] }] }),
  );
  const rack = (id: string) => store.getNode(id)!.Meta!.rack;
  assert.deepEqual(
    placed("s")
      .map((a) => rack(a.NodeID))
      .sort(),
    ["r1", "r2"],
  );
  const even = placed("e").map((a) => rack(a.NodeID));
  assert.equal(even.filter((r) => r === "r1").length, 2, "an even spread (no targets) too");
});

test("rank: distinct_hosts at job and group level, and its off switch", async () => {
  const dh: Constraint = { LTarget: "", Operand: "distinct_hosts", RTarget: "" };
  const { placed, results } = await schedule(
    [node("a"), node("b")],
    job("g", 3, { Constraints: [dh] }),
    job("j", 2, {}, { Constraints: [dh] }),
    job("off", 2, { Constraints: [{ ...dh, RTarget: "false" }] }),
  );
  assert.deepEqual(byNode(placed("g")), { a: 1, b: 1 });
  assert.equal(results[0]!.failures[0]!.metrics.ConstraintFiltered.distinct_hosts, 2);
  assert.deepEqual(byNode(placed("j")), { a: 1, b: 1 });
  assert.equal(placed("off").length, 2);
});

test("rank: distinct_property limits allocs per value, with Nomad's reasons", async () => {
  const nodes = [
    node("a1", { Meta: { rack: "r1" } }),
    node("a2", { Meta: { rack: "r1" } }),
    node("b1", { Meta: { rack: "r2" } }),
    node("x"),
  ];
  const dp = (limit: string): Constraint => ({
    LTarget: "${meta.rack}",
    Operand: "distinct_property",
    RTarget: limit,
  });
  const { placed, results, store } = await schedule(
    nodes,
    job("one", 3, { Constraints: [dp("")] }),
    job("two", 4, { Constraints: [dp("2")] }),
  );
  const rack = (id: string) => store.getNode(id)!.Meta!.rack;
  assert.deepEqual(
    placed("one")
      .map((a) => rack(a.NodeID))
      .sort(),
    ["r1", "r2"],
  );
  const f = results[0]!.failures[0]!.metrics.ConstraintFiltered;
  assert.equal(f['missing property "${meta.rack}"'], 1);
  assert.equal(f["distinct_property: ${meta.rack}=r1 used by 1 allocs"], 2);
  assert.equal(placed("two").length, 4);
});

test("rank: a task whose driver the node lacks filters it as 'missing drivers'", async () => {
  const j = job("j", 1);
  j.TaskGroups[0]!.Tasks[0]!.Driver = "docker";
  const { last, placed } = await schedule([node("a")], j);
  assert.equal(placed("j").length, 0);
  assert.deepEqual(last.failures[0]!.metrics.ConstraintFiltered, { "missing drivers": 1 });
});

test("rank: an odd stored AllocatedResources counts as nothing instead of failing placement", async () => {
  const { store, placed } = await schedule([node("a")], job("first", 1));
  const a = placed("first")[0]!;
  const odd = { ...a, AllocatedResources: { Tasks: { t: { Cpu: null, Memory: { MemoryMB: "x" } } } } };
  await store.txn((tx) => tx.putAlloc(odd as never));
  const scheduler = new Scheduler(store, nullLogger);
  const j = job("second", 1);
  await store.txn((tx) => tx.putJob(j));
  const r = await scheduler.evaluate("default", j.ID);
  assert.equal(r.placed, 1);
});
