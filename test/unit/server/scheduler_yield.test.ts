/**
 * A long scheduling pass yields to the event loop (other work runs while it plans), and a write that
 * lands during one of its yields is never overridden by a plan made before it: the pass plans again
 * on the state as it is. Over an in-memory store with many nodes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setImmediate as turn } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { makeNode } from "../../builders/node.js";

// At most node_sample.ts SCORE_EVERY_NODE_UP_TO: every node is scored for every alloc, so the pass is long.
const NODES = 100;
const ALLOCS = 300;

async function cluster() {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  await store.txn((tx) => {
    for (let i = 0; i < NODES; i++) tx.putNode(makeNode(`n${String(i).padStart(3, "0")}`));
    tx.putJob(
      validateJob({
        ID: "big",
        Type: "service",
        TaskGroups: [{ Name: "g", Count: ALLOCS, Tasks: [{ Name: "t", Driver: "exec" }] }],
      }),
    );
  });
  return { store, scheduler };
}

/** Counts the turns of the event loop (check phase) until stopped. */
function countTurns() {
  const state = { turns: 0, on: true };
  void (async () => {
    while (state.on) {
      await turn();
      state.turns++;
    }
  })();
  return state;
}

test("scheduler: a long pass lets the event loop turn while it plans", async (t) => {
  const { store, scheduler } = await cluster();
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  const loop = countTurns();
  const started = loop.turns;
  const result = await scheduler.evaluate("default", "big");
  const during = loop.turns - started;
  loop.on = false;
  assert.equal(result.placed, ALLOCS);
  assert.ok(during > 0, "the event loop turned during the pass");
});

test("scheduler: a write during a yield of the pass is seen; the plan made before it is not applied", async (t) => {
  const { store, scheduler } = await cluster();
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  const pass = scheduler.evaluate("default", "big");
  // While the pass plans: every node but two goes down.
  await turn();
  const kept = new Set(["n000", "n001"]);
  await store.txn((tx) => {
    for (const n of tx.listNodes()) if (!kept.has(n.ID)) tx.putNode({ ...n, Status: "down" });
  });
  const result = await pass;
  assert.equal(result.placed, ALLOCS);
  const on = new Set(store.allocsByJob("default", "big").map((a) => a.NodeID));
  assert.deepEqual([...on].sort(), [...kept].sort(), "every alloc is on a node that is still up");
});
