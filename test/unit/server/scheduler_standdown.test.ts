/**
 * Scheduler.standDown (leadership lost): the blocked set and the follow-up timers are dropped, a
 * pass in flight finishes without putting its job back in the set, and the next term's start-up
 * pass (evaluateAll) rebuilds both from the store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/sqlite_store.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import { csiJob, plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

async function setup(t: { after(fn: () => unknown): void }, evaluateFailure = true) {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  await store.txn((tx) => tx.putNode(makeNode("n1")));
  // "blocked": its volume does not exist; "web": placed, then its alloc fails (a delayed eval).
  await store.txn((tx) => {
    tx.putJob(csiJob("blocked"));
    tx.putJob(plainJob("web"));
  });
  await scheduler.evaluate("default", "blocked");
  await scheduler.evaluate("default", "web");
  const [a] = store.allocsByJob("default", "web");
  await store.txn((tx) =>
    tx.putAlloc({ ...tx.getAlloc(a!.ID)!, ClientStatus: "failed", ModifyTime: Date.now() * NS_PER_MS }),
  );
  if (evaluateFailure) await scheduler.evaluate("default", "web", "alloc-failure");
  return { store, scheduler };
}

test("standDown drops the blocked set and the timers; the next term's start-up pass re-arms them", async (t) => {
  const { store, scheduler } = await setup(t);
  assert.ok(scheduler.isBlocked("default", "blocked"));
  assert.equal(scheduler.armedFollowups, 1);

  scheduler.standDown();
  assert.equal(scheduler.isBlocked("default", "blocked"), false);
  assert.equal(scheduler.armedFollowups, 0);
  const evals = store.listEvals().length;
  await scheduler.retryBlocked();
  assert.equal(store.listEvals().length, evals, "a follower's retry runs no pass");

  await scheduler.evaluateAll();
  assert.ok(scheduler.isBlocked("default", "blocked"), "the new term knows the blocked job again");
  assert.equal(scheduler.armedFollowups, 1, "and the delayed eval's timer");
});

test("a pass in flight when leadership is lost finishes but leaves the set and timers alone", async (t) => {
  const { scheduler } = await setup(t, false);
  scheduler.standDown();
  const blocked = scheduler.evaluate("default", "blocked", "queued-allocs");
  const failed = scheduler.evaluate("default", "web", "alloc-failure");
  scheduler.standDown();
  const [b, f] = await Promise.all([blocked, failed]);
  assert.equal(b.failures.length, 1, "the passes ran to their end");
  assert.equal(f.followups.length, 1);
  assert.equal(scheduler.isBlocked("default", "blocked"), false);
  assert.equal(scheduler.armedFollowups, 0);
});
