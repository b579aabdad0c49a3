/**
 * rebase.ts: a plan made at an index stays the plan of the store after writes that only freed what
 * it relied on (an existing alloc's status, a claim of an existing alloc), and not after a write
 * that could take something from it (a new alloc, a node, a job). A real in-memory store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stillValidSince } from "../../../src/server/scheduler/rebase.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { Job } from "../../../src/structs/job.js";
import { alloc, node, volume, volumeJob } from "../../conformance/builders.js";
import { claimOf } from "../../builders/claim.js";

async function setup() {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putNode(node("n1"));
    tx.putJob(volumeJob("j", { source: "v", perAlloc: true, count: 3 }));
    tx.putVolume(volume("v[0]"));
  });
  const job = s.getJob("default", "j")!;
  await s.txn((tx) => tx.putAlloc(alloc("a0", job, "n1", 0)));
  return { s, job, from: s.index() };
}

test("a plan stays valid across an existing alloc's status update and its claim", async () => {
  const { s, from } = await setup();
  try {
    await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a0")!, ClientStatus: "running" }));
    await s.txn((tx) => {
      const v = tx.getVolume("default", "v[0]")!;
      tx.putVolume({ ...v, WriteClaims: { a0: claimOf({ ID: "a0", NodeID: "n1" }) } });
    });
    assert.notEqual(s.index(), from);
    assert.equal(stillValidSince(s, from), true);
  } finally {
    s.close();
  }
});

test("a plan is stale after a new alloc, a node write or a job write", async () => {
  const cases: [string, (s: SqliteStateStore, job: Job) => Promise<unknown>][] = [
    ["new alloc", (s, job) => s.txn((tx) => tx.putAlloc(alloc("a1", job, "n1", 1)))],
    ["node", (s) => s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "down" }))],
    ["job", (s, job) => s.txn((tx) => tx.putJob({ ...job, Priority: 70 }))],
  ];
  for (const [what, write] of cases) {
    const { s, job, from } = await setup();
    try {
      await write(s, job);
      assert.equal(stillValidSince(s, from), false, what);
    } finally {
      s.close();
    }
  }
});
