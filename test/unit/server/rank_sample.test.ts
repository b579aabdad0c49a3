/**
 * selectNode over a NodeSample (src/server/scheduler/rank.ts, node_sample.ts): on a big cluster a
 * placement stops after Nomad's limit of ranked options (infeasible and exhausted nodes do not
 * count), sets aside up to three options scoring ≤ 0 and takes them only when the nodes run out;
 * a cluster of at most 100 nodes is still scored whole. A PlanContext over an in-memory store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { PlanContext } from "../../../src/server/scheduler/feasibility.js";
import { NodeSample } from "../../../src/server/scheduler/node_sample.js";
import { selectNode } from "../../../src/server/scheduler/rank.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { AllocatedResources, Allocation } from "../../../src/structs/alloc.js";
import { newAllocMetric } from "../../../src/structs/eval.js";
import type { Job } from "../../../src/structs/job.js";
import type { Node } from "../../../src/structs/node.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

/** 4 cores × 1000 MHz, `mem` MiB. */
const node = (id: string, over: Partial<Node> = {}, mem = 4096) =>
  makeNode(id, {
    NodeResources: {
      Cpu: { CpuShares: 4000, TotalCpuCores: 4, ReservableCpuCores: [0, 1, 2, 3] },
      Memory: { MemoryMB: mem },
      Disk: { DiskMB: 100_000 },
    },
    ...over,
  });
const nodes = (n: number, over: (i: number) => Partial<Node> = () => ({})) =>
  Array.from({ length: n }, (_, i) => node(`n${i}`, over(i)));

const resources = (cpu: number, mem: number): AllocatedResources => ({
  Tasks: { t: { Cpu: { CpuShares: cpu, ReservedCores: null }, Memory: { MemoryMB: mem, MemoryMaxMB: 0 } } },
  Shared: { DiskMB: 0 },
});

function job(id: string, count: number, type = "service"): Job {
  const j = plainJob(id, type);
  // dc1 named: the other datacenter's nodes are this file's infeasible ones.
  return { ...j, Datacenters: ["dc1"], TaskGroups: [{ ...j.TaskGroups[0]!, Count: count }] };
}

/** A store holding `list` and `allocs`, and a fresh plan over it with `planned` already placed. */
async function planOver(list: Node[], allocs: Allocation[] = [], planned: Allocation[] = []) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    list.forEach((n) => tx.putNode(n));
    allocs.forEach((a) => tx.putAlloc(a));
  });
  const ctx: PlanContext = { state: store, planned, stopping: new Set() };
  return { store, ctx };
}

/** One placement of `j`'s group through selectNode, with its own metric. */
function pick(ctx: PlanContext, sample: NodeSample, j: Job, index = 0) {
  const metrics = newAllocMetric({});
  const picked = selectNode(ctx, sample, j, j.TaskGroups[0]!, index, `alloc-${index}`, metrics);
  return { node: picked?.node.ID ?? null, score: picked?.score, metrics };
}

test("rank sample: one placement on 1,000 identical nodes evaluates about log2(n) of them, not all", async () => {
  const list = nodes(1000);
  const { store, ctx } = await planOver(list);
  try {
    const sample = new NodeSample(list, "seed");
    const order = sample.order.map((n) => n.ID);
    const j = job("web", 2);
    const first = pick(ctx, sample, j);
    assert.equal(first.metrics.NodesEvaluated, 10, "ceil(log2 1000) ranked options");
    assert.equal(first.metrics.NodesFiltered, 0);
    assert.equal(first.node, order[0], "ties go to the first node visited");
    ctx.planned.push(allocOf(j, first.node, { AllocatedResources: resources(100, 300) }));
    // The next placement walks on from the 11th node of the order.
    const second = pick(ctx, sample, j, 1);
    assert.equal(second.metrics.NodesEvaluated, 10);
    assert.equal(second.node, order[10]);
    const batch = pick(ctx, new NodeSample(list, "seed"), job("b", 2, "batch"));
    assert.equal(batch.metrics.NodesEvaluated, 2, "two choices for a batch job");
  } finally {
    store.close();
  }
});

test("rank sample: a cluster of 100 nodes is scored whole, and binpack still picks the fuller node", async () => {
  const list = nodes(100);
  const other = job("other", 1);
  // The last node in the order is the fuller one: only scoring every node finds it.
  const busy = allocOf(other, "n99", { AllocatedResources: resources(2000, 2048) });
  const { store, ctx } = await planOver(list, [busy]);
  try {
    const sample = new NodeSample(list, "seed");
    const j = job("web", 1);
    for (let i = 0; i < 2; i++) {
      const got = pick(ctx, sample, j);
      assert.equal(got.metrics.NodesEvaluated, 100, "every node, on every placement");
      assert.equal(got.node, "n99", "the fuller node");
    }
    // Nothing to tell the nodes apart: the first node in the given order, every time.
    const empty = await planOver(list);
    try {
      const again = new NodeSample(list, "seed");
      assert.equal(pick(empty.ctx, again, j).node, "n0");
      assert.equal(pick(empty.ctx, again, j).node, "n0");
    } finally {
      empty.store.close();
    }
  } finally {
    store.close();
  }
});

test("rank sample: infeasible and exhausted nodes do not count toward the limit", async () => {
  // 1,000 nodes: one in 20 feasible; the rest lack the driver, are in another datacenter, or
  // have no room for the alloc.
  const list = Array.from({ length: 1000 }, (_, i) => {
    if (i % 20 === 0) return node(`n${i}`);
    if (i % 3 === 0) return node(`n${i}`, { Datacenter: "dc2" });
    if (i % 3 === 1) return node(`n${i}`, { Drivers: {} });
    return node(`n${i}`, {}, 100);
  });
  const feasible = new Set(list.filter((_, i) => i % 20 === 0).map((n) => n.ID));
  const { store, ctx } = await planOver(list);
  try {
    const sample = new NodeSample(list, "seed");
    const got = pick(ctx, sample, job("web", 1));
    const m = got.metrics;
    assert.ok(got.node !== null && feasible.has(got.node), `picked ${got.node}`);
    assert.ok(m.NodesEvaluated > 10, `evaluated ${m.NodesEvaluated}`);
    assert.ok(m.NodesFiltered > 0 && m.NodesExhausted > 0);
    assert.equal(m.NodesEvaluated - m.NodesFiltered - m.NodesExhausted, 10, "ten ranked options");
    assert.ok((m.ConstraintFiltered["missing drivers"] ?? 0) > 0);
    // Exactly the nodes up to the 10th feasible one in the order were looked at.
    const order = sample.order.map((n) => n.ID);
    let ranked = 0;
    const upTo = order.findIndex((id) => feasible.has(id) && ++ranked === 10);
    assert.equal(m.NodesEvaluated, upTo + 1);
  } finally {
    store.close();
  }
});

/** 1,000 nodes; the first three of the sample's order already run `j`'s group (in the plan). */
async function antiAffinity(fullerAt: number) {
  const list = nodes(1000);
  const order = new NodeSample(list, "seed").order.map((n) => n.ID);
  const j = job("web", 2);
  const planned = order.slice(0, 3).map((id) => allocOf(j, id, { AllocatedResources: resources(100, 300) }));
  const busy = allocOf(job("other", 1), order[fullerAt]!, { AllocatedResources: resources(2000, 2048) });
  const { store, ctx } = await planOver(list, [busy], planned);
  return { store, ctx, list, order, j };
}

test("rank sample: options scoring <= 0 are skipped, so a better node later in the order is in reach", async () => {
  const { store, ctx, list, order, j } = await antiAffinity(12);
  try {
    // The premise: a node running the group scores <= 0 (job anti-affinity outweighs binpack).
    const alone = new NodeSample([list.find((n) => n.ID === order[0])!], "seed");
    assert.ok(pick(ctx, alone, j).score! <= 0);
    // Three skipped, then ten ranked: the 13th node, the fuller one, is among them.
    const got = pick(ctx, new NodeSample(list, "seed"), j, 3);
    assert.equal(got.node, order[12], "the fuller node past the skipped ones");
    assert.equal(got.metrics.NodesEvaluated, 13);
  } finally {
    store.close();
  }
  // One further and it is out of reach: the first ranked option after the skipped ones wins.
  const far = await antiAffinity(13);
  try {
    const got = pick(far.ctx, new NodeSample(far.list, "seed"), far.j, 3);
    assert.equal(got.node, far.order[3]);
    assert.equal(got.metrics.NodesEvaluated, 13);
  } finally {
    far.store.close();
  }
});

test("rank sample: skipped options are taken when the nodes run out", async () => {
  // 1,000 nodes, three of them feasible, all three already running the group.
  const list = nodes(1000, (i) => (i < 3 ? {} : { Drivers: {} }));
  const j = job("web", 2);
  const planned = ["n0", "n1", "n2"].map((id) => allocOf(j, id, { AllocatedResources: resources(100, 300) }));
  const { store, ctx } = await planOver(list, [], planned);
  try {
    const got = pick(ctx, new NodeSample(list, "seed"), j, 3);
    assert.ok(got.node !== null && ["n0", "n1", "n2"].includes(got.node), `picked ${got.node}`);
    assert.ok(got.score! <= 0);
    assert.equal(got.metrics.NodesEvaluated, 1000, "every node was looked at first");
  } finally {
    store.close();
  }
});
