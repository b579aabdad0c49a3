/**
 * NodeSample (src/server/scheduler/node_sample.ts): which nodes one placement scores. A small
 * cluster is scored whole, in the given order, from the first node every time; a big one is a
 * seeded shuffle that each placement walks on from where the previous one stopped, wrapping, with
 * Nomad's limits on how many ranked options are enough.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  NODE_LIMIT_FOR_FEASIBILITY_CHECKS,
  NodeSample,
  SCORE_EVERY_NODE_UP_TO,
} from "../../../src/server/scheduler/node_sample.js";
import type { Job, TaskGroup } from "../../../src/structs/job.js";
import type { Node } from "../../../src/structs/node.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

const nodes = (n: number): Node[] => Array.from({ length: n }, (_, i) => makeNode(`n${i}`));
const ids = (list: Iterable<Node>): string[] => [...list].map((n) => n.ID);

function jobOf(type: string, count = 1): { job: Job; group: TaskGroup } {
  const j = plainJob("j", type);
  const group = { ...j.TaskGroups[0]!, Count: count };
  return { job: { ...j, TaskGroups: [group] }, group };
}

/** The first `k` nodes of one `visit()` call, leaving the loop after them. */
function take(sample: NodeSample, k: number): string[] {
  const out: string[] = [];
  for (const node of sample.visit()) {
    out.push(node.ID);
    if (out.length === k) break;
  }
  return out;
}

test("node sample: Nomad's limits on a big cluster (service log2 n, batch 2, affinity/spread max(count, 100))", () => {
  const big = new NodeSample(nodes(1000), "seed");
  assert.equal(big.whole, false);
  const service = jobOf("service", 3);
  assert.equal(big.limitFor(service.job, service.group, false), 10, "ceil(log2 1000)");
  const batch = jobOf("batch", 3);
  assert.equal(big.limitFor(batch.job, batch.group, false), 2, "the power of two choices");
  assert.equal(big.limitFor(service.job, service.group, true), NODE_LIMIT_FOR_FEASIBILITY_CHECKS);
  assert.equal(big.limitFor(batch.job, batch.group, true), 100, "affinity/spread wins over batch");
  const wide = jobOf("service", 250);
  assert.equal(big.limitFor(wide.job, wide.group, true), 250, "a group bigger than 100");
  const justOver = new NodeSample(nodes(SCORE_EVERY_NODE_UP_TO + 1), "seed");
  assert.equal(justOver.whole, false);
  assert.equal(justOver.limitFor(service.job, service.group, false), 7, "ceil(log2 101)");
});

test("node sample: a cluster of at most 100 nodes is scored whole, with no limit", () => {
  for (const n of [1, 2, SCORE_EVERY_NODE_UP_TO]) {
    const small = new NodeSample(nodes(n), "seed");
    assert.equal(small.whole, true, `${n} nodes`);
    for (const type of ["service", "batch"]) {
      const { job, group } = jobOf(type, 500);
      assert.equal(small.limitFor(job, group, false), Infinity);
      assert.equal(small.limitFor(job, group, true), Infinity);
    }
  }
});

test("node sample: whole mode visits in the given order, from the first node on every call", () => {
  const input = nodes(SCORE_EVERY_NODE_UP_TO).reverse();
  const sample = new NodeSample(input, "seed");
  assert.deepEqual(ids(sample.visit()), ids(input), "the given order, unshuffled");
  assert.deepEqual(take(sample, 7), ids(input.slice(0, 7)));
  assert.deepEqual(take(sample, 3), ids(input.slice(0, 3)), "a stopped call does not move the start");
  assert.deepEqual(ids(sample.visit()), ids(input), "every node again, from the first");
});

test("node sample: a big cluster's order is a seeded permutation of the nodes", () => {
  const input = nodes(1000);
  const a = new NodeSample(input, "default\u0000web\u000042");
  const again = new NodeSample(input, "default\u0000web\u000042");
  const otherIndex = new NodeSample(input, "default\u0000web\u000043");
  const otherJob = new NodeSample(input, "default\u0000api\u000042");
  assert.deepEqual(ids(a.order), ids(again.order), "the same seed plans the same way");
  assert.notDeepEqual(ids(a.order), ids(otherIndex.order), "another store index, another order");
  assert.notDeepEqual(ids(a.order), ids(otherJob.order), "another job, another order");
  assert.notDeepEqual(ids(a.order), ids(input), "shuffled, not the given order");
  for (const s of [a, otherIndex, otherJob]) {
    assert.equal(new Set(ids(s.order)).size, input.length, "no node twice");
    assert.deepEqual(ids(s.order).sort(), ids(input).sort(), "every node");
  }
  // Two jobs do not pile onto the same nodes: their first choices differ.
  assert.notDeepEqual(ids(a.order.slice(0, 10)), ids(otherJob.order.slice(0, 10)));
  assert.deepEqual(ids(input), ids(nodes(1000)), "the caller's array is left alone");
  assert.deepEqual(ids(a.visit()), ids(a.order), "a fresh sample visits in its order");
});

test("node sample: each visit resumes where the previous one stopped, and wraps round", () => {
  const n = 200;
  const sample = new NodeSample(nodes(n), "seed");
  const order = ids(sample.order);
  assert.deepEqual(take(sample, 10), order.slice(0, 10));
  assert.deepEqual(take(sample, 5), order.slice(10, 15), "starts at the 11th");
  assert.deepEqual(take(sample, 1), [order[15]]);
  // A call that walks to the end wraps round: each node once, starting where the last one stopped.
  const full = ids(sample.visit());
  assert.equal(full.length, n, "each node once per call");
  assert.deepEqual(full, [...order.slice(16), ...order.slice(0, 16)]);
  assert.deepEqual(take(sample, 2), order.slice(16, 18), "a full walk leaves the start where it was");
  // Stop just before the end: the next call runs over the end and on from the first node.
  assert.deepEqual(take(sample, n - 20), order.slice(18, n - 2));
  const wrapped = take(sample, 5);
  assert.deepEqual(wrapped, [order[n - 2], order[n - 1], order[0], order[1], order[2]]);
  assert.equal(new Set(ids(sample.visit())).size, n, "still each node once");
});
