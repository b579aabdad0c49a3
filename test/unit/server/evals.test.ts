/**
 * Evaluations: placement metrics derived from the real feasibility checks, Nomad's eval/blocked-eval
 * lifecycle as the scheduler records it, the per-job history bound and the GC of purged jobs' evals.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { collectEvalsIn } from "../../../src/server/gc/collector.js";
import { nullLogger } from "../../../src/internal/log.js";
import { EVALS_KEPT_PER_JOB, type Evaluation } from "../../../src/structs/eval.js";
import type { Node } from "../../../src/structs/node.js";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { csiJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

async function setup(nodes: Node[], vols: CSIVolume[]) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    nodes.forEach((n) => tx.putNode(n));
    vols.forEach((v) => tx.putVolume(v));
  });
  return { store, scheduler: new Scheduler(store, nullLogger) };
}

const withPlugin = (id: string, info = nodePluginInfo("p1"), over: Partial<Node> = {}) =>
  makeNode(id, { CSINodePlugins: { p1: info }, ...over });

const byStatus = (evals: Evaluation[], status: string) => evals.filter((e) => e.Status === status);

test("evals: metrics count evaluated, filtered (by reason and class) and available nodes", async () => {
  const { store, scheduler } = await setup(
    [
      makeNode("bare", { NodeClass: "small" }),
      withPlugin("sick", nodePluginInfo("p1", { Healthy: false })),
      withPlugin("down", undefined, { Status: "down" }),
      withPlugin("drained", undefined, { SchedulingEligibility: "ineligible" }),
      withPlugin("far", undefined, { Datacenter: "dc2" }),
    ],
    [makeVolume("vol1")],
  );
  // Named explicitly: a job without `datacenters` may use every datacenter (Nomad's ["*"]).
  await store.txn((tx) => tx.putJob({ ...csiJob("j"), Datacenters: ["dc1"] }));
  const r = await scheduler.evaluate("default", "j");
  assert.equal(r.placed, 0);
  assert.deepEqual(r.failures[0]!.metrics, {
    NodesEvaluated: 2,
    NodesFiltered: 2,
    NodesAvailable: { dc1: 2 },
    ClassFiltered: { small: 1 },
    ConstraintFiltered: {
      "CSI plugin p1 is missing from client bare": 1,
      "CSI plugin p1 is unhealthy on client sick": 1,
    },
    NodesExhausted: 0,
    ClassExhausted: {},
    DimensionExhausted: {},
    QuotaExhausted: [],
    CoalescedFailures: 0,
  });
  store.close();
});

test("evals: Nomad's reasons for a missing volume, driver, constraint and exhausted writer claims", async () => {
  const reasons = async (nodes: Node[], vols: CSIVolume[], job = csiJob("j")) => {
    const { store, scheduler } = await setup(nodes, vols);
    await store.txn((tx) => tx.putJob(job));
    const r = await scheduler.evaluate("default", job.ID);
    store.close();
    return r.failures.map((f) => ({ missing: f.missing, metrics: f.metrics }));
  };
  const [missing] = await reasons([withPlugin("n1")], []);
  assert.deepEqual(missing!.metrics.ConstraintFiltered, { "missing CSI Volume vol1": 1 });

  const noDriver = withPlugin("n1", undefined, { Drivers: {} });
  const [driver] = await reasons([noDriver], [makeVolume("vol1")]);
  assert.deepEqual(driver!.metrics.ConstraintFiltered, { "missing drivers": 1 });

  const constrained = csiJob("c");
  constrained.Constraints = [{ LTarget: "${node.class}", RTarget: "fast", Operand: "=" }];
  const [constraint] = await reasons([withPlugin("n1"), withPlugin("n2")], [makeVolume("vol1")], constrained);
  assert.deepEqual(constraint!.metrics.ConstraintFiltered, { "${node.class} = fast": 2 });

  // One node, three writers of a single-node-writer volume: one placed, two failed, coalesced.
  const [writers] = await reasons([withPlugin("n1")], [makeVolume("vol1")], csiJob("w", { count: 3 }));
  assert.equal(writers!.missing, 2);
  assert.equal(writers!.metrics.CoalescedFailures, 1);
  assert.deepEqual(writers!.metrics.ConstraintFiltered, {
    "CSI volume vol1 has exhausted its available writer claims": 1,
  });

  const [none] = await reasons([], [makeVolume("vol1")], { ...csiJob("j"), Datacenters: ["dc1"] });
  assert.equal(none!.metrics.NodesEvaluated, 0);
  assert.deepEqual(none!.metrics.NodesAvailable, { dc1: 0 });
});

test("evals: a failed pass is complete with FailedTGAllocs and a blocked eval that runs until placed", async () => {
  const { store, scheduler } = await setup([makeNode("bare")], [makeVolume("vol1")]);
  await store.txn((tx) => tx.putJob(csiJob("j")));
  const r = await scheduler.evaluate("default", "j", "job-register");
  let evals = store.evalsByJob("default", "j");
  assert.equal(evals.length, 2);
  const [first, blocked] = evals as [Evaluation, Evaluation];
  assert.equal(r.evalId, first.ID);
  assert.equal(r.blockedEvalId, blocked.ID);
  assert.deepEqual(
    [first.Status, first.TriggeredBy, first.BlockedEval, first.Type, first.JobID, first.QueuedAllocations],
    ["complete", "job-register", blocked.ID, "service", "j", { g: 1 }],
  );
  assert.deepEqual(Object.keys(first.FailedTGAllocs!), ["g"]);
  assert.deepEqual(
    [blocked.Status, blocked.TriggeredBy, blocked.PreviousEval, blocked.StatusDescription],
    ["blocked", "queued-allocs", first.ID, "created to place remaining allocations"],
  );
  assert.deepEqual(blocked.FailedTGAllocs, first.FailedTGAllocs);
  assert.equal(first.CreateIndex, blocked.CreateIndex);
  assert.ok(first.CreateTime > 0);

  // Nothing changed: the blocked eval runs again and writes nothing.
  const evalsIndex = store.tableIndex("evals");
  await scheduler.retryBlocked();
  assert.equal(store.tableIndex("evals"), evalsIndex);

  // Another reason now: the blocked eval's failures are refreshed, no new eval.
  await store.txn((tx) => tx.putNode(withPlugin("sick", nodePluginInfo("p1", { Healthy: false }))));
  await scheduler.retryBlocked();
  evals = store.evalsByJob("default", "j");
  assert.equal(evals.length, 2);
  assert.deepEqual(evals[1]!.FailedTGAllocs!.g!.ConstraintFiltered, {
    "CSI plugin p1 is missing from client bare": 1,
    "CSI plugin p1 is unhealthy on client sick": 1,
  });
  assert.equal(evals[1]!.Status, "blocked");

  // Placeable: the blocked eval completes, records the alloc it placed and the job is unblocked.
  await store.txn((tx) => tx.putNode(withPlugin("good")));
  await scheduler.retryBlocked();
  evals = store.evalsByJob("default", "j");
  assert.equal(evals.length, 2);
  const done = evals[1]!;
  assert.deepEqual([done.ID, done.Status, done.FailedTGAllocs], [blocked.ID, "complete", null]);
  assert.deepEqual(done.QueuedAllocations, { g: 0 });
  assert.deepEqual(
    done.PlacedAllocIDs,
    store.allocsByJob("default", "j").map((a) => a.ID),
  );
  assert.equal(scheduler.isBlocked("default", "j"), false);
  store.close();
});

test("evals: a new trigger cancels the older blocked eval, by a newer one or by placing everything", async () => {
  const { store, scheduler } = await setup([makeNode("bare")], [makeVolume("vol1")]);
  await store.txn((tx) => tx.putJob(csiJob("j")));
  const first = await scheduler.evaluate("default", "j", "job-register");
  const second = await scheduler.evaluate("default", "j", "node-update");
  let old = store.getEval(first.blockedEvalId)!;
  assert.equal(old.Status, "cancelled");
  assert.equal(old.StatusDescription, 'existing blocked evaluation exists for job "j"');
  assert.equal(store.getEval(second.blockedEvalId)!.Status, "blocked");
  assert.equal(store.getEval(second.evalId)!.TriggeredBy, "node-update");

  await store.txn((tx) => tx.putNode(withPlugin("good")));
  const third = await scheduler.evaluate("default", "j", "job-register");
  old = store.getEval(second.blockedEvalId)!;
  assert.equal(old.Status, "cancelled");
  assert.equal(old.StatusDescription, `evaluation "${third.evalId}" placed the remaining allocations`);
  assert.equal(third.blockedEvalId, "");
  const latest = store.getEval(third.evalId)!;
  assert.deepEqual([latest.Status, latest.FailedTGAllocs, latest.BlockedEval], ["complete", null, ""]);
  assert.equal(byStatus(store.evalsByJob("default", "j"), "blocked").length, 0);
  store.close();
});

test("evals: a job keeps its last evals and its blocked one; start-up passes with nothing to do record none", async () => {
  const { store, scheduler } = await setup([makeNode("bare")], [makeVolume("vol1")]);
  await store.txn((tx) => tx.putJob(csiJob("j")));
  for (let i = 0; i < 15; i++) await scheduler.evaluate("default", "j", "node-update");
  const evals = store.evalsByJob("default", "j");
  assert.equal(evals.length, EVALS_KEPT_PER_JOB);
  assert.equal(byStatus(evals, "blocked").length, 1, "the live blocked eval is kept");
  assert.equal(evals.at(-1)!.Status, "blocked");

  const quiet = await setup([withPlugin("n1")], [makeVolume("vol1")]);
  await quiet.store.txn((tx) => tx.putJob(csiJob("q")));
  await quiet.scheduler.evaluate("default", "q");
  assert.equal(quiet.store.evalsByJob("default", "q").length, 1);
  await quiet.scheduler.evaluateAll();
  assert.equal(quiet.store.evalsByJob("default", "q").length, 1, "a no-op start-up pass records nothing");
  store.close();
  quiet.store.close();
});

test("evals: a purged job's blocked eval is cancelled, and GC removes its evals after the threshold", async () => {
  const { store, scheduler } = await setup([makeNode("bare")], [makeVolume("vol1")]);
  await store.txn((tx) => {
    tx.putJob(csiJob("gone"));
    tx.putJob(csiJob("kept"));
  });
  await scheduler.evaluate("default", "gone");
  await scheduler.evaluate("default", "kept");
  await store.txn((tx) => tx.deleteJob("default", "gone"));
  const r = await scheduler.evaluate("default", "gone", "job-deregister");
  assert.equal(r.evalId, "");
  assert.equal(scheduler.isBlocked("default", "gone"), false);
  assert.deepEqual(
    store.evalsByJob("default", "gone").map((e) => e.Status),
    ["complete", "cancelled"],
  );

  const newest = Math.max(...store.listEvals().map((e) => e.ModifyTime / 1e6));
  const opts = { evalThresholdMs: 60_000 };
  assert.deepEqual(await store.txn((tx) => collectEvalsIn(tx, newest + 59_000, opts)), []);
  const collected = await store.txn((tx) => collectEvalsIn(tx, newest + 60_000, opts));
  assert.equal(collected.length, 2);
  assert.deepEqual(store.evalsByJob("default", "gone"), []);
  assert.equal(store.evalsByJob("default", "kept").length, 2, "a live job's evals stay");
  store.close();
});
