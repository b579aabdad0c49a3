/**
 * The scheduler's node list cache (node_list_cache.ts): the list is read again after any node
 * write, and inside a write transaction it is never taken once an earlier txn of the same batch
 * wrote a node. Over an in-memory SQLite store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeListCache } from "../../../src/server/scheduler/node_list_cache.js";
import { SqliteStateStore } from "../../../src/server/state/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { makeNode } from "../../builders/node.js";

async function storeWithNodes(t: { after: (fn: () => void) => void }) {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(makeNode("a"));
    tx.putNode(makeNode("b"));
  });
  return store;
}

test("node list cache: reused while no node is written, read again after a write", async (t) => {
  const store = await storeWithNodes(t);
  const cache = new NodeListCache();
  const first = cache.list(store);
  assert.deepEqual(first.map((n) => n.ID).sort(), ["a", "b"]);
  await store.txn((tx) =>
    tx.putJob(
      validateJob({
        ID: "other",
        TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec" }] }],
      }),
    ),
  );
  assert.equal(cache.list(store), first, "no node write: the same parsed list");

  await store.txn((tx) => tx.putNode({ ...tx.getNode("a")!, Status: "down" }));
  assert.equal(cache.cached(store), undefined, "a node write makes the cached list stale");
  const second = cache.list(store);
  assert.notEqual(second, first);
  assert.equal(second.find((n) => n.ID === "a")?.Status, "down");
  assert.equal(cache.cached(store), second);
});

test("node list cache: inside a batch, a node written by an earlier txn makes it stale", async (t) => {
  const store = await storeWithNodes(t);
  const cache = new NodeListCache();
  cache.list(store);
  // Both txns are queued in the same turn, so they run in one group-commit batch.
  const write = store.txn((tx) => tx.putNode(makeNode("c")));
  const seen = store.txn(() => cache.cached(store));
  await write;
  assert.equal(await seen, undefined, "the list read before the batch lacks node c");
});
