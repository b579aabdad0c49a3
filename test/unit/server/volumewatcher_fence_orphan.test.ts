/**
 * The volumewatcher over an in-memory store with a fake release walk and a fake node answer
 * (issue 28): a single-writer claim of a down node is not freed before the fence bound (measured
 * from when the node went down, before the watcher could see it) and is freed after it with no
 * store write to wake the watcher, while a reader claim is freed at once; a finished alloc's claim
 * on a live node is released without the node step only once the node says it holds nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { VolumeWatcher, type ClaimReleaser } from "../../../src/server/volumewatcher/watcher.js";
import { findClaim, freeClaim, setClaimState } from "../../../src/structs/claim.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { NodeVolumeStateResponse } from "../../../src/structs/rpc_volume_state.js";
import type { ClaimState, VolumeClaim } from "../../../src/structs/volume.js";
import { allocOf } from "../../builders/alloc.js";
import { csiJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";

function claim(allocId: string, nodeId: string, mode: "read" | "write"): VolumeClaim {
  return {
    AllocationID: allocId,
    NodeID: nodeId,
    ExternalNodeID: `ext-${nodeId}`,
    Mode: mode,
    AccessMode: mode === "write" ? "single-node-writer" : "multi-node-reader-only",
    AttachmentMode: "file-system",
    State: "taken",
  };
}

interface Call {
  alloc: string;
  reported: ClaimState;
  at: number;
}

/** A walk that frees the claim (from `reported`), and a node whose answer the test sets. */
function fakeParts(store: SqliteStateStore) {
  const calls: Call[] = [];
  const asked: string[] = [];
  const node: { answer: NodeVolumeStateResponse | "unreachable" } = { answer: "unreachable" };
  const releaser: ClaimReleaser = {
    async releaseClaim(namespace, req, reported) {
      calls.push({ alloc: req.AllocationID, reported, at: performance.now() });
      await store.txn((tx) => {
        const v = tx.getVolume(namespace, req.VolumeID);
        if (v) tx.putVolume(freeClaim(setClaimState(v, req.AllocationID, reported), req.AllocationID));
      });
      return true;
    },
    nodeVolumeState(nodeId, req) {
      asked.push(`${nodeId}:${req.VolumeID}:${req.AllocID}`);
      if (node.answer === "unreachable")
        return Promise.reject(new BerthError("ERR_NODE_NOT_CONNECTED", `node ${nodeId} is not connected`));
      return Promise.resolve(node.answer);
    },
  };
  return { releaser, calls, asked, node };
}

const fast = { scanIntervalMs: 5, minIntervalMs: 5, backoffBaseMs: 40, backoffMaxMs: 160 };

async function until(what: string, fn: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

test("fence hold: a down node's single-writer claim waits out fenceHoldMs (woken by its own timer); a reader goes at once", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  const job = csiJob("j");
  const w1 = allocOf(job, "n1");
  const r1 = allocOf(job, "n1");
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putJob(job);
    tx.putAlloc(w1);
    tx.putAlloc(r1);
    tx.putVolume(
      makeVolume("v1", {
        WriteClaims: { [w1.ID]: claim(w1.ID, "n1", "write") },
        ReadClaims: { [r1.ID]: claim(r1.ID, "n1", "read") },
      }),
    );
  });
  const { releaser, calls } = fakeParts(store);
  const holdMs = 600;
  const w = new VolumeWatcher(store, releaser, nullLogger, { ...fast, fenceHoldMs: holdMs });
  w.start();
  t.after(() => w.stop());
  await tick(50);
  assert.equal(calls.length, 0, "both allocs run on a live node");

  // The node goes down; the watcher cannot have seen it before this instant.
  const downAt = performance.now();
  await store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "down", StatusUpdatedAt: Date.now() }));
  await until("the reader's release", () => calls.some((c) => c.alloc === r1.ID));
  assert.ok(!calls.some((c) => c.alloc === w1.ID), "the writer is held");
  await until("the hold to show on the claim", () => {
    const c = findClaim(store.getVolume("default", "v1")!, w1.ID);
    return c?.ReleaseStatus?.Step === "fence-hold";
  });
  const status = findClaim(store.getVolume("default", "v1")!, w1.ID)!.ReleaseStatus!;
  assert.match(status.LastError, /self-fence bound/);
  assert.ok(status.NextAttempt > 0);

  // Nothing is written from here on: only the watcher's own timer can end the hold.
  await until("the writer's release", () => calls.some((c) => c.alloc === w1.ID));
  const released = calls.find((c) => c.alloc === w1.ID)!;
  assert.ok(
    released.at - downAt >= holdMs,
    `freed ${Math.round(released.at - downAt)} ms after the node went down, before the ${holdMs} ms bound`,
  );
  assert.equal(released.reported, "taken", "the walk skips the node step of a down node");
  // The fake walk records the call before its transaction commits: wait for the commit.
  await until(
    "the claim freed",
    () => Object.keys(store.getVolume("default", "v1")!.WriteClaims).length === 0,
  );
});

test("fence hold: a node back up before the bound keeps its claim for its own agent's release", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  const job = csiJob("j");
  const a = allocOf(job, "n1");
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { Status: "down", StatusUpdatedAt: 1 }));
    tx.putJob(job);
    tx.putAlloc(a);
    tx.putVolume(makeVolume("v1", { WriteClaims: { [a.ID]: claim(a.ID, "n1", "write") } }));
  });
  const { releaser, calls } = fakeParts(store);
  const w = new VolumeWatcher(store, releaser, nullLogger, { ...fast, fenceHoldMs: 400 });
  w.start();
  t.after(() => w.stop());
  await tick(100);
  await store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "ready", StatusUpdatedAt: 2 }));
  await tick(700);
  assert.equal(calls.length, 0, "a live node's running alloc keeps its claim");
});

test("unused claim: a finished alloc's claim on a live node is released without the node step only when the node holds nothing", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  const job = csiJob("j");
  const a = allocOf(job, "n1", { ClientStatus: "failed", DesiredStatus: "run" });
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putJob(job);
    tx.putAlloc(a);
    tx.putVolume(makeVolume("v1", { WriteClaims: { [a.ID]: claim(a.ID, "n1", "write") } }));
  });
  const parts = fakeParts(store);
  const { releaser, calls, asked, node } = parts;
  const w = new VolumeWatcher(store, releaser, nullLogger, {
    ...fast,
    orphanGraceMs: 100,
    orphanRecheckMs: 150,
  });
  w.start();
  t.after(() => w.stop());

  // A node that cannot be reached: asked, and asked again, never guessed.
  await until("two questions", () => asked.length >= 2);
  assert.equal(asked[0], `n1:v1:${a.ID}`);
  // A node that still has it mounted, or a release pending, or the alloc active: waits.
  for (const answer of [
    { Mounted: true, ReleasePending: false, AllocActive: false },
    { Mounted: false, ReleasePending: true, AllocActive: false },
    { Mounted: false, ReleasePending: false, AllocActive: true },
  ]) {
    node.answer = answer;
    const n = asked.length;
    await until("the node to be asked again", () => asked.length >= n + 2);
  }
  assert.equal(calls.length, 0, "never released while the node holds something");

  node.answer = { Mounted: false, ReleasePending: false, AllocActive: false };
  await until("the release", () => calls.length === 1);
  assert.deepEqual(
    calls.map((c) => [c.alloc, c.reported]),
    [[a.ID, "node-detached"]],
  );
  // The fake walk records the call before its transaction commits: wait for the commit.
  await until(
    "the claim freed",
    () => Object.keys(store.getVolume("default", "v1")!.WriteClaims).length === 0,
  );
});

test("unused claim: a stopped alloc its node has not reported finished is never asked about", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  const job = csiJob("j");
  const a = allocOf(job, "n1", { ClientStatus: "pending", DesiredStatus: "stop" });
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putJob(job);
    tx.putAlloc(a);
    tx.putVolume(makeVolume("v1", { WriteClaims: { [a.ID]: claim(a.ID, "n1", "write") } }));
  });
  const { releaser, calls, asked, node } = fakeParts(store);
  node.answer = { Mounted: false, ReleasePending: false, AllocActive: false };
  const w = new VolumeWatcher(store, releaser, nullLogger, {
    ...fast,
    orphanGraceMs: 50,
    orphanRecheckMs: 50,
  });
  w.start();
  t.after(() => w.stop());
  await tick(400);
  assert.deepEqual([asked.length, calls.length], [0, 0]);
  // Its node reports it finished: now it is asked, and released.
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(a.ID)!, ClientStatus: "complete" }));
  await until("the release", () => calls.length === 1);
  assert.equal(asked.length >= 1, true);
});
