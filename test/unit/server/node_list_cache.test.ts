/**
 * The scheduler's node list cache (node_list_cache.ts): the list follows node writes (by delta
 * when no node was deleted, whole otherwise) and always equals listNodes, and inside a write
 * transaction it is never taken once an earlier txn of the same batch wrote a node. Over an
 * in-memory SQLite store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { compareUtf8, NodeListCache } from "../../../src/server/scheduler/node_list_cache.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
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

test("node list cache: node updates and additions are read alone, in listNodes' order", async (t) => {
  const store = await storeWithNodes(t);
  const cache = new NodeListCache();
  cache.list(store);
  assert.deepEqual(cache.reads, { whole: 1, delta: 0 });
  // IDs whose order differs between UTF-16 units and SQLite's UTF-8 bytes, and plain ones.
  const ids = ["c", "\u{1F600}", "\uE000", "é", "aa", "0", "b1", "\u{10000}x", "zz"];
  for (const id of ids) await store.txn((tx) => tx.putNode(makeNode(id)));
  await store.txn((tx) => tx.putNode({ ...tx.getNode("a")!, Status: "down" }));
  let held: { list: readonly unknown[]; copy: string } | undefined;
  for (let i = 0; i < 3; i++) {
    // More nodes than changes, so each step after the first is a delta read.
    await store.txn((tx) => {
      tx.putNode({ ...tx.getNode(ids[i]!)!, Status: "initializing" });
      tx.putNode(makeNode(`late${i}`));
    });
    const list = cache.list(store);
    assert.deepEqual(list, store.listNodes(), `step ${i}: the list as listNodes has it`);
    if (held) assert.equal(JSON.stringify(held.list), held.copy, "a list a pass holds never changes");
    held = { list, copy: JSON.stringify(list) };
  }
  assert.deepEqual(cache.reads, { whole: 2, delta: 2 }, "the first changes (most of the list) read whole");
  assert.equal(cache.list(store).find((n) => n.ID === "a")?.Status, "down");
});

test("node list cache: a deleted node makes the next read whole", async (t) => {
  const store = await storeWithNodes(t);
  for (const id of ["c", "d", "e", "f"]) await store.txn((tx) => tx.putNode(makeNode(id)));
  const cache = new NodeListCache();
  cache.list(store);
  assert.equal(store.nodesDeletedAt(), 0);
  await store.txn((tx) => tx.deleteNode("b"));
  const deletedAt = store.index();
  assert.equal(store.nodesDeletedAt(), deletedAt, "the deletion's index is recorded");
  await store.txn((tx) => tx.putNode({ ...tx.getNode("c")!, Status: "down" }));
  const after = cache.list(store);
  assert.deepEqual(
    after.map((n) => n.ID),
    ["a", "c", "d", "e", "f"],
  );
  assert.deepEqual(cache.reads, { whole: 2, delta: 0 });
  await store.txn((tx) => tx.putNode({ ...tx.getNode("d")!, Status: "down" }));
  assert.deepEqual(cache.list(store), store.listNodes());
  assert.deepEqual(cache.reads, { whole: 2, delta: 1 }, "a deletion already read is not read again");
  assert.equal(store.nodesDeletedAt(), deletedAt, "a put leaves the deletion index alone");
});

test("compareUtf8 orders as SQLite's BINARY collation (UTF-8 bytes)", () => {
  const ids = ["\u{1F600}", "\uE000", "é", "a", "ab", "\u{10000}", "\uFFFF", ""];
  const bytes = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.deepEqual([...ids].sort(compareUtf8), bytes);
});
