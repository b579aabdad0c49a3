/**
 * Scheduler.standDown (leadership lost): the blocked set and the follow-up timers are dropped, a
 * pass in flight finishes without putting its job back in the set, a retry of blocked jobs under
 * way stops (a trigger of the next term gets a round of its own), and the next term's start-up
 * pass (evaluateAll) rebuilds both from the store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import type { EvalOptions, EvalResult } from "../../../src/server/scheduler/evaluate_in.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import type { EvalTrigger } from "../../../src/structs/eval.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
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

test("a retry under way when leadership is lost stops; a trigger of the next term gets its own round", async (t) => {
  const store = new SqliteStateStore(null);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const calls: string[] = [];
  // Holds the retry of "a" until released, so the next term's trigger comes while it is under way.
  class Spy extends Scheduler {
    override async evaluate(
      ns: string,
      id: string,
      trigger?: EvalTrigger,
      opts?: EvalOptions,
    ): Promise<EvalResult> {
      calls.push(`${id}:${trigger ?? "job-register"}`);
      if (id === "a" && trigger === "queued-allocs") await held;
      return super.evaluate(ns, id, trigger, opts);
    }
  }
  const scheduler = new Spy(store, nullLogger);
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  await store.txn((tx) => ["a", "b", "c"].forEach((id) => tx.putJob(csiJob(id))));
  await scheduler.evaluate("default", "a");
  await scheduler.evaluate("default", "b");
  const retry = scheduler.retryBlocked();
  while (!calls.includes("a:queued-allocs")) await new Promise((r) => setImmediate(r));
  scheduler.standDown();
  await scheduler.evaluate("default", "c");
  void scheduler.retryBlocked();
  release();
  await retry;
  assert.ok(!calls.includes("b:queued-allocs"), "the dropped set's other job is not retried");
  assert.ok(calls.includes("c:queued-allocs"), `the next term's blocked job is retried: ${calls.join(", ")}`);
});
