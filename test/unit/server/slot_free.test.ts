/**
 * scheduler/reconcile_update.ts slotFree: a slot of a single-writer group waits (silently) for its
 * own previous alloc's claim, or a finished alloc's claim of the job, to be released — a handover;
 * a live alloc of ANOTHER slot holding the write claim (count 2 on one single-writer volume) does
 * not hold the slot, so the placement is tried and fails visibly with a blocked eval.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { slotFree } from "../../../src/server/scheduler/reconcile_update.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { allocOf } from "../../builders/alloc.js";
import { claimOf } from "../../builders/claim.js";
import { csiJob } from "../../builders/job.js";
import { makeVolume } from "../../builders/volume.js";

test("slotFree: another slot's live writer does not hold the slot; the slot's own or a finished alloc's claim does", async () => {
  const store = new SqliteStateStore(null);
  try {
    const job = csiJob("s", { count: 2 });
    const g = job.TaskGroups[0]!;
    const first = allocOf(job, "n1", { ID: "a0", Name: "s.g[0]" });
    await store.txn((tx) => {
      tx.putJob(job);
      tx.putAlloc(first);
      tx.putVolume(makeVolume("vol1", { WriteClaims: { a0: claimOf(first) } }));
    });
    const live = new Set(["s.g[0]"]);
    assert.equal(slotFree(store, job, g, 1, "s.g[1]", live), true, "slot 1 is tried (and fails visibly)");
    assert.equal(slotFree(store, job, g, 0, "s.g[0]", live), false, "slot 0 is taken by its alloc");

    // Slot 0's alloc stops; its claim is still being released: its replacement waits for it.
    await store.txn((tx) => tx.putAlloc({ ...first, DesiredStatus: "stop", ClientStatus: "complete" }));
    assert.equal(slotFree(store, job, g, 0, "s.g[0]", new Set()), false, "a handover waits for the release");
    assert.equal(
      slotFree(store, job, g, 1, "s.g[1]", new Set()),
      false,
      "a finished alloc's claim holds too",
    );
  } finally {
    store.close();
  }
});
