/**
 * Per-object watch keys (issue 13): a blocking wait on one object wakes only when a commit writes
 * that object, through the real SQLite store (in memory) and its txn path; whole-table waits are
 * woken by any write to their table as before; no waiter is left registered behind.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { IndexWatch } from "../../../src/server/state/watch.js";
import { watchKeys, type WatchKey } from "../../../src/server/state/watch_keys.js";
import type { Table } from "../../../src/server/state/store.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

/** A promise's state, observed after every callback of the commit that might settle it has run. */
function track(p: Promise<number>): { readonly settled: boolean } {
  const state = { settled: false };
  void p.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

const turn = () => new Promise((r) => setImmediate(r));
const HOUR = 3_600_000;

test("a wait on node A's allocs sleeps through alloc writes on node B and wakes on one on A", async () => {
  const s = new SqliteStateStore(null);
  const ac = new AbortController();
  try {
    const job = plainJob("web");
    await s.txn((tx) => {
      tx.putNode(makeNode("A"));
      tx.putNode(makeNode("B"));
      tx.putJob(job);
    });
    const onA = track(
      s.waitFor(["allocs"], s.tableIndex("allocs"), ac.signal, HOUR, [watchKeys.allocsOfNode("A")]),
    );
    const table = track(s.waitFor(["allocs"], s.tableIndex("allocs"), ac.signal, HOUR));

    const onB = allocOf(job, "B");
    await s.txn((tx) => tx.putAlloc(onB));
    await turn();
    assert.equal(onA.settled, false, "an alloc written on B does not wake a waiter on A's allocs");
    assert.equal(table.settled, true, "a waiter on the whole allocs table is woken as before");

    await s.txn((tx) => tx.putAlloc({ ...onB, ClientStatus: "complete" }));
    await s.txn((tx) => tx.deleteAlloc(onB.ID));
    await turn();
    assert.equal(onA.settled, false, "nor does an update or a delete on B");

    const a = allocOf(job, "A");
    await s.txn((tx) => tx.putAlloc(a));
    await turn();
    assert.equal(onA.settled, true, "an alloc placed on A wakes it");

    // A delete on A wakes a waiter on A too (the store finds the node of the alloc it deletes).
    const again = track(
      s.waitFor(["allocs"], s.tableIndex("allocs"), ac.signal, HOUR, [watchKeys.allocsOfNode("A")]),
    );
    await s.txn((tx) => tx.deleteAlloc(a.ID));
    await turn();
    assert.equal(again.settled, true, "deleting A's alloc wakes it");
  } finally {
    ac.abort();
    s.close();
  }
});

test("a wait on one volume wakes on that volume and on its plugin, not on another volume", async () => {
  const s = new SqliteStateStore(null);
  const ac = new AbortController();
  try {
    await s.txn((tx) => {
      tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
      tx.putVolume(makeVolume("v1"));
      tx.putVolume(makeVolume("v2"));
    });
    const keys: WatchKey[] = [watchKeys.volume("default", "v1"), watchKeys.plugin("p1")];
    const tables: Table[] = ["volumes", "plugins"];
    const from = () => Math.max(s.tableIndex("volumes"), s.tableIndex("plugins"));
    const w1 = track(s.waitFor(tables, from(), ac.signal, HOUR, keys));
    await s.txn((tx) => tx.putVolume({ ...makeVolume("v2"), Context: { x: "1" } }));
    await turn();
    assert.equal(w1.settled, false, "another volume's write does not wake it");
    await s.txn((tx) => tx.putVolume({ ...makeVolume("v1"), Context: { x: "1" } }));
    await turn();
    assert.equal(w1.settled, true, "its own volume's write wakes it");

    const w2 = track(s.waitFor(tables, from(), ac.signal, HOUR, keys));
    // The node plugin turns unhealthy: the plugin record changes, the volume does not.
    await s.txn((tx) =>
      tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1", { Healthy: false }) } })),
    );
    await turn();
    assert.equal(w2.settled, true, "its plugin's change wakes it");
  } finally {
    ac.abort();
    s.close();
  }
});

test("IndexWatch: a commit that touches a table without naming its objects wakes that table's keyed waiters", async () => {
  let index = 1;
  const w = new IndexWatch(
    () => index,
    () => index,
  );
  const ac = new AbortController();
  const keyed = track(w.wait(["allocs"], 1, ac.signal, HOUR, [watchKeys.allocsOfNode("A")]));
  const other = track(w.wait(["volumes"], 1, ac.signal, HOUR, [watchKeys.volume("default", "v")]));
  assert.equal(w.size, 2);
  index = 2;
  w.notify(new Set<Table>(["allocs"]), new Set<WatchKey>([watchKeys.allocsOfNode("B")]));
  await turn();
  assert.equal(keyed.settled, false, "a key of another node names what moved: A's waiter sleeps");
  index = 3;
  w.notify(new Set<Table>(["allocs"]));
  await turn();
  assert.equal(keyed.settled, true, "no key of allocs named: every keyed waiter of allocs wakes");
  assert.equal(other.settled, false, "waiters of other tables do not");
  ac.abort();
  await turn();
  assert.equal(other.settled, true);
  assert.equal(w.size, 0, "woken and aborted waiters are all unregistered");
});

test("IndexWatch: the check at the start is per table; waiters time out and leave nothing behind", async () => {
  let index = 5;
  const w = new IndexWatch(
    () => index,
    () => index,
  );
  assert.equal(await w.wait(["allocs"], 4, undefined, HOUR, [watchKeys.allocsOfNode("A")]), 5);
  const timed = await w.wait(["allocs"], 5, undefined, 1, [watchKeys.allocsOfNode("A")]);
  assert.equal(timed, 5);
  index = 6;
  assert.equal(w.size, 0);
});

test("the write that wakes waiters continues before they run (they are woken on the next turn)", async () => {
  const s = new SqliteStateStore(null);
  try {
    const order: string[] = [];
    const waiting = s.waitFor(["volumes"], 0, undefined, HOUR).then(() => order.push("waiter"));
    await s.txn((tx) => tx.putVolume(makeVolume("v1")));
    order.push("writer");
    await waiting;
    assert.deepEqual(order, ["writer", "waiter"]);
  } finally {
    s.close();
  }
});
