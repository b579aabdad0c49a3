/**
 * Nomad's disconnect strategy on the server (node_loss.ts): a node that misses its heartbeat while
 * running allocs whose group has `lost_after` is disconnected and those allocs unknown; when the
 * window ends they are lost, the node down; a node back in contact is left to its agent's reports.
 * Over an in-memory SQLite store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { expireUnknownAllocs, markNodeDown, nextUnknownExpiry } from "../../../src/server/node_loss.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { unknownSinceMs, wasDisconnected } from "../../../src/structs/disconnect.js";
import { markNodeReady } from "../../../src/structs/node.js";
import type { Job } from "../../../src/structs/job.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

const S = 1_000_000_000;

function withDisconnect(id: string, disconnect: Record<string, unknown> | null): Job {
  const job = plainJob(id);
  return { ...job, TaskGroups: job.TaskGroups.map((g) => ({ ...g, Disconnect: disconnect })) };
}

async function nodeWith(jobs: Job[]) {
  const store = new SqliteStateStore(null);
  const allocs = jobs.map((j) => allocOf(j, "n1"));
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    for (const j of jobs) tx.putJob(j);
    for (const a of allocs) tx.putAlloc(a);
  });
  return { store, ids: allocs.map((a) => a.ID) };
}

test("disconnect: lost_after makes the node disconnected and its allocs unknown; others are lost", async () => {
  const { store, ids } = await nodeWith([withDisconnect("keep", { LostAfter: 60 * S }), plainJob("plain")]);
  const loss = await store.txn((tx) => markNodeDown(tx, "n1", 10_000, "node missed its heartbeat"));
  assert.deepEqual(loss?.nextExpiryMs, 70_000);
  assert.deepEqual(loss?.jobs.map((j) => j.id).sort(), ["keep", "plain"]);
  assert.equal(store.getNode("n1")!.Status, "disconnected");
  const [kept, plain] = ids.map((id) => store.getAlloc(id)!);
  assert.deepEqual([kept!.ClientStatus, kept!.DesiredStatus], ["unknown", "run"]);
  assert.equal(unknownSinceMs(kept!), 10_000);
  assert.deepEqual([plain!.ClientStatus, plain!.DesiredStatus], ["lost", "stop"]);
  assert.equal(nextUnknownExpiry(store.allocsByNode("n1")), 70_000);
  assert.equal(await store.txn((tx) => markNodeDown(tx, "n1", 20_000, "again")), null, "not up: nothing");
  store.close();
});

test("disconnect: unknown allocs are lost when their window ends, and the node is then down", async () => {
  const { store, ids } = await nodeWith([
    withDisconnect("short", { LostAfter: 5 * S }),
    withDisconnect("long", { LostAfter: 60 * S }),
  ]);
  await store.txn((tx) => markNodeDown(tx, "n1", 0, "node missed its heartbeat"));
  const early = await store.txn((tx) => expireUnknownAllocs(tx, "n1", 4_999));
  assert.deepEqual(early, { jobs: [], nextExpiryMs: 5_000 }, "nothing before the window ends");
  const first = await store.txn((tx) => expireUnknownAllocs(tx, "n1", 5_000));
  assert.deepEqual(first, { jobs: [{ namespace: "default", id: "short" }], nextExpiryMs: 60_000 });
  let node = store.getNode("n1")!;
  assert.deepEqual(
    [node.Status, node.StatusUpdatedAt],
    ["disconnected", 5_000],
    "a new out-of-contact episode",
  );
  const short = store.getAlloc(ids[0]!)!;
  assert.deepEqual([short.ClientStatus, short.DesiredStatus], ["lost", "stop"]);
  assert.equal(wasDisconnected(short), true);
  const last = await store.txn((tx) => expireUnknownAllocs(tx, "n1", 61_000));
  assert.deepEqual(last, { jobs: [{ namespace: "default", id: "long" }], nextExpiryMs: undefined });
  node = store.getNode("n1")!;
  assert.deepEqual([node.Status, node.StatusUpdatedAt], ["down", 61_000]);
  store.close();
});

test("disconnect: a node back in contact keeps its unknown allocs for its agent to report", async () => {
  const { store, ids } = await nodeWith([withDisconnect("keep", { LostAfter: 5 * S })]);
  await store.txn((tx) => markNodeDown(tx, "n1", 0, "node missed its heartbeat"));
  await store.txn((tx) => tx.putNode(markNodeReady(tx.getNode("n1")!, 1_000)));
  assert.equal(await store.txn((tx) => expireUnknownAllocs(tx, "n1", 10_000)), null);
  assert.equal(store.getAlloc(ids[0]!)!.ClientStatus, "unknown");
  store.close();
});

test("disconnect: max_client_disconnect is lost_after's older spelling; a stopped alloc is lost at once", async () => {
  const job = plainJob("old");
  const old: Job = { ...job, TaskGroups: job.TaskGroups.map((g) => ({ ...g, MaxClientDisconnect: 3 * S })) };
  const { store, ids } = await nodeWith([old]);
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(ids[0]!)!, DesiredStatus: "stop" }));
  await store.txn((tx) => markNodeDown(tx, "n1", 0, "x"));
  assert.equal(store.getAlloc(ids[0]!)!.ClientStatus, "lost", "a stopped alloc has no window");
  assert.equal(store.getNode("n1")!.Status, "down");
  store.close();
});

test("disconnect: a disconnected node whose unknown allocs its own reports ended is down at the window's end", async () => {
  const { store, ids } = await nodeWith([withDisconnect("keep", { LostAfter: 5 * S })]);
  await store.txn((tx) => markNodeDown(tx, "n1", 0, "node missed its heartbeat"));
  // The node's report arrives (its heartbeat does not): the alloc is no longer unknown.
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(ids[0]!)!, ClientStatus: "complete" }));
  const loss = await store.txn((tx) => expireUnknownAllocs(tx, "n1", 5_000));
  assert.deepEqual(loss, { jobs: [], nextExpiryMs: undefined });
  assert.deepEqual([store.getNode("n1")!.Status, store.getNode("n1")!.StatusUpdatedAt], ["down", 5_000]);
  store.close();
});
