/**
 * A plan made ahead of its transaction is applied when the txns queued before it (in its
 * group-commit batch) only wrote what leaves it valid (rebase.ts), and planned again when one wrote
 * something it relied on. Over an in-memory store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluateIn } from "../../../src/server/scheduler/evaluate_in.js";
import { planAhead } from "../../../src/server/scheduler/plan_ahead.js";
import { stillValidSince } from "../../../src/server/scheduler/rebase.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { makeNode } from "../../builders/node.js";

const job = (id: string, count: number) =>
  validateJob({
    ID: id,
    Type: "service",
    TaskGroups: [{ Name: "g", Count: count, Tasks: [{ Name: "t", Driver: "exec" }] }],
  });

async function setup(t: { after: (fn: () => void) => void }) {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    for (const id of ["n1", "n2", "n3"]) tx.putNode(makeNode(id));
    tx.putJob(job("a", 1));
    tx.putJob(job("b", 3));
  });
  // Job a has an alloc, whose status the "node" reports while b's plan waits.
  await store.txn((tx) => evaluateIn(tx, "default", "a"));
  const ahead = await planAhead(store, "default", "b", undefined);
  assert.ok(ahead, "b's plan was made ahead");
  const batching = { placedBefore: [], stillValid: (from: number) => stillValidSince(store, from) };
  return { store, ahead, batching };
}

test("evaluateIn: a plan made ahead survives a status update queued before it in the batch", async (t) => {
  const { store, ahead, batching } = await setup(t);
  const [aAlloc] = store.allocsByJob("default", "a");
  // Queued in the same turn: both txns run in one batch, the status update first.
  const update = store.txn((tx) =>
    tx.putAlloc({ ...tx.getAlloc(aAlloc!.ID)!, ClientStatus: "running" }, { fromClient: true }),
  );
  const result = await store.txn((tx) => evaluateIn(tx, "default", "b", "job-register", {}, ahead, batching));
  await update;
  assert.ok(store.index() > ahead.index);
  assert.equal(result.usedAhead, true, "the plan made ahead was applied");
  assert.deepEqual(
    result.placedIds.sort(),
    ahead.plan.place.map((a) => a.ID).sort(),
    "exactly the allocs planned ahead",
  );
});

test("evaluateIn: a node written before it in the batch makes the plan be made again", async (t) => {
  const { store, ahead, batching } = await setup(t);
  const down = store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "down" }));
  const result = await store.txn((tx) => evaluateIn(tx, "default", "b", "job-register", {}, ahead, batching));
  await down;
  assert.equal(result.usedAhead, false);
  assert.equal(result.placed, 3);
  const nodes = store.allocsByJob("default", "b").map((a) => a.NodeID);
  assert.ok(!nodes.includes("n1"), "nothing is placed on the node that went down");
});
