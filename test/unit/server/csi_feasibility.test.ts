/**
 * CSI feasibility from per-plan indexes (src/server/scheduler/csi_feasibility.ts): what a node
 * check reads is built once per plan and extended with the plan's own placements, so the answers
 * stay those of a fresh read while a pass over many nodes reads each volume once and never the
 * plugin's full record. A real in-memory store; the plan is computePlan's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { computePlan } from "../../../src/server/scheduler/plan.js";
import type { StateReader } from "../../../src/server/state/store.js";
import { csiJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

/** `state` with a count of every call to each of its methods. */
function counting(state: StateReader): { state: StateReader; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(state, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function" || typeof prop !== "string") return v;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { state: proxy, calls };
}

test("CSI feasibility: a plan on many nodes reads each volume a few times, not per node, and no plugin's full record", async () => {
  const store = new SqliteStateStore(null);
  try {
    const job = csiJob("j", { source: "data", perAlloc: true, count: 5 });
    await store.txn((tx) => {
      for (let i = 0; i < 40; i++)
        tx.putNode(makeNode(`n${i}`, { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
      for (let i = 0; i < 5; i++) tx.putVolume(makeVolume(`data[${i}]`));
      tx.putJob(job);
    });
    const { state, calls } = counting(store);
    const plan = computePlan(state, store.getJob("default", "j")!, Date.now() * 1e6);
    assert.equal(plan.place.length, 5);
    assert.equal(calls.get("getPlugin") ?? 0, 0, "the full plugin record is never read");
    // Per volume, not per (volume × node): 5 allocs over 40 nodes read each volume a few times
    // (feasibility once, the reconciler's own checks), never once per node tried.
    assert.ok((calls.get("getVolume") ?? 0) <= 3 * 5, `volume reads: ${calls.get("getVolume")}`);
    assert.ok((calls.get("allocsByVolume") ?? 0) <= 5, `claim scans: ${calls.get("allocsByVolume")}`);
    assert.ok((calls.get("pluginSummary") ?? 0) <= 5, `plugin reads: ${calls.get("pluginSummary")}`);
  } finally {
    store.close();
  }
});

test("CSI feasibility: the plan's own placements count toward a node's max volumes", async () => {
  const store = new SqliteStateStore(null);
  try {
    const one = nodePluginInfo("p1", {}, { MaxVolumes: 1 });
    const job = csiJob("j", { source: "data", perAlloc: true, count: 2 });
    await store.txn((tx) => {
      for (const id of ["n1", "n2"]) tx.putNode(makeNode(id, { CSINodePlugins: { p1: one } }));
      for (let i = 0; i < 2; i++) tx.putVolume(makeVolume(`data[${i}]`));
      tx.putJob(job);
    });
    const plan = computePlan(store, store.getJob("default", "j")!, Date.now() * 1e6);
    assert.deepEqual(
      plan.place.map((a) => a.NodeID).sort(),
      ["n1", "n2"],
      "one volume per node: the first placement fills its node",
    );
    const three = csiJob("k", { source: "data", perAlloc: true, count: 3 });
    await store.txn((tx) => {
      tx.putVolume(makeVolume("data[2]"));
      tx.putJob(three);
    });
    const over = computePlan(store, store.getJob("default", "k")!, Date.now() * 1e6);
    assert.equal(over.place.length, 2, "a third volume fits no node");
    assert.ok(
      Object.keys(over.failures[0]!.metrics.ConstraintFiltered).some((k) =>
        k.includes("maximum number of volumes"),
      ),
    );
  } finally {
    store.close();
  }
});
