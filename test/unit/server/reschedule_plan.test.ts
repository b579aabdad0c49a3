import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { collectIn, DEFAULT_GC_OPTIONS } from "../../../src/server/gc/collector.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import { makeNode } from "../../builders/node.js";

function plainJob(id: string, type = "service") {
  return validateJob({
    ID: id,
    Type: type,
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
  });
}

async function setup(t: { after(fn: () => unknown): void }) {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  await store.txn((tx) => tx.putNode(makeNode("n1")));
  return { store, scheduler };
}

async function fail(store: SqliteStateStore, id: string) {
  await store.txn((tx) =>
    tx.putAlloc({ ...tx.getAlloc(id)!, ClientStatus: "failed", ModifyTime: Date.now() * NS_PER_MS }),
  );
}

test("service default: a failed alloc gets one follow-up eval 30s out; further passes neither replace it nor add evals", async (t) => {
  const { store, scheduler } = await setup(t);
  await store.txn((tx) => tx.putJob(plainJob("web")));
  await scheduler.evaluate("default", "web");
  const [a] = store.allocsByJob("default", "web");
  await fail(store, a!.ID);
  const r = await scheduler.evaluate("default", "web", "alloc-failure");
  assert.equal(r.placed, 0);
  assert.equal(r.followups.length, 1);
  const failed = store.getAlloc(a!.ID)!;
  const ev = store.getEval(failed.FollowupEvalID!)!;
  assert.equal(Date.parse(ev.WaitUntil!), Math.floor((failed.ModifyTime + 30e9) / 1e6));
  assert.equal(scheduler.armedFollowups, 1, "a timer waits for it");
  for (const trigger of ["node-update", "queued-allocs", "job-register"] as const) {
    const again = await scheduler.evaluate("default", "web", trigger);
    assert.deepEqual([again.placed, again.followups.length], [0, 0], trigger);
  }
  assert.equal(store.getAlloc(a!.ID)!.FollowupEvalID, ev.ID, "still waits for the same eval");
  assert.equal(store.evalsByJob("default", "web").filter((e) => e.Status === "pending").length, 1);
  assert.equal(store.getJob("default", "web")!.Status, "pending");

  // Running the follow-up replaces the alloc at once, whatever the clock says.
  const run = await scheduler.evaluate("default", "web", "alloc-failure", { followupEvalId: ev.ID });
  assert.equal(run.placed, 1);
  assert.equal(store.getEval(ev.ID)!.Status, "complete");
  const next = store.allocsByJob("default", "web").find((x) => x.ID !== a!.ID)!;
  assert.equal(next.PreviousAllocation, a!.ID);
  assert.equal(store.getAlloc(a!.ID)!.NextAllocation, next.ID);

  // Stopping the job cancels a pending follow-up, and a cancelled follow-up runs as a no-op.
  await fail(store, next.ID);
  await scheduler.evaluate("default", "web", "alloc-failure");
  const second = store.getAlloc(next.ID)!.FollowupEvalID!;
  assert.equal(store.getEval(second)!.Status, "pending");
  await store.txn((tx) => tx.putJob({ ...tx.getJob("default", "web")!, Stop: true }));
  await scheduler.evaluate("default", "web", "job-deregister");
  assert.equal(store.getEval(second)!.Status, "cancelled");
  const noop = await scheduler.evaluate("default", "web", "alloc-failure", { followupEvalId: second });
  assert.deepEqual([noop.placed, noop.evalId], [0, ""]);
});

test("a group stored before reschedule policies existed gets its job type's default, not a loop or nothing", async (t) => {
  const { store, scheduler } = await setup(t);
  const job = plainJob("old", "batch");
  delete job.TaskGroups[0]!.ReschedulePolicy;
  await store.txn((tx) => tx.putJob(job));
  await scheduler.evaluate("default", "old");
  const [a] = store.allocsByJob("default", "old");
  await fail(store, a!.ID);
  const r = await scheduler.evaluate("default", "old", "alloc-failure");
  assert.deepEqual([r.placed, r.followups.length], [0, 1], "batch default: one attempt after 5s");
  const ev = store.getEval(store.getAlloc(a!.ID)!.FollowupEvalID!)!;
  assert.equal(Date.parse(ev.WaitUntil!), Math.floor((store.getAlloc(a!.ID)!.ModifyTime + 5e9) / 1e6));
});

test("system jobs are not rescheduled: a failed system alloc is placed again only on its own node", async (t) => {
  const { store, scheduler } = await setup(t);
  await store.txn((tx) => tx.putJob(plainJob("sys", "system")));
  await scheduler.evaluate("default", "sys");
  const [a] = store.allocsByJob("default", "sys");
  await fail(store, a!.ID);
  // Nomad's system reconciler: the slot is the node's; no follow-up eval, no other node. (The node
  // endpoint runs no pass for a failed system alloc, as Nomad creates no eval for one: it is placed
  // again by the job's next pass, a node change or a new version.)
  const r = await scheduler.evaluate("default", "sys", "node-update");
  assert.deepEqual([r.placed, r.followups.length], [1, 0]);
  const next = store.allocsByJob("default", "sys").find((x) => x.ID !== a!.ID)!;
  assert.deepEqual([next.NodeID, next.PreviousAllocation], [a!.NodeID, a!.ID]);
});

test("GC: allocs of a purged job are collectable although a new job took its ID", async (t) => {
  const { store, scheduler } = await setup(t);
  await store.txn((tx) => tx.putJob(plainJob("once", "batch")));
  await scheduler.evaluate("default", "once");
  const [old] = store.allocsByJob("default", "once");
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(old!.ID)!, ClientStatus: "complete" }));
  await store.txn((tx) => tx.deleteJob("default", "once"));
  await store.txn((tx) => tx.putJob(plainJob("once", "batch")));
  await scheduler.evaluate("default", "once");
  const later = Date.now() + DEFAULT_GC_OPTIONS.allocThresholdMs + 1000;
  const res = await store.txn((tx) => collectIn(tx, later, DEFAULT_GC_OPTIONS));
  assert.deepEqual(res.allocs, [old!.ID], "only the purged job's alloc; the new job's is not terminal");
});
