/**
 * The volumewatcher: its per-claim decisions (pure), and the watcher itself over an in-memory store
 * with a fake release walk — event-driven, resumes from what the store holds, never a tight loop.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { claimAction, volumeWork } from "../../../src/server/volumewatcher/decide.js";
import { VolumeWatcher, type ClaimReleaser } from "../../../src/server/volumewatcher/watcher.js";
import { freeClaim, setClaimState } from "../../../src/structs/claim.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { ClaimState, VolumeClaim } from "../../../src/structs/volume.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";

function claim(allocId: string, nodeId: string, State: ClaimState = "taken"): VolumeClaim {
  return {
    AllocationID: allocId,
    NodeID: nodeId,
    ExternalNodeID: `ext-${nodeId}`,
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    State,
  };
}

const running = { ClientStatus: "running", DesiredStatus: "run" } as const;
const complete = { ClientStatus: "complete", DesiredStatus: "run" } as const;
const neverRan = { ClientStatus: "pending", DesiredStatus: "stop" } as const;
const lost = { ClientStatus: "lost", DesiredStatus: "stop" } as const;
const up = { Status: "ready" } as const;
const down = { Status: "down" } as const;

test("volumewatcher decisions: what each claim needs", () => {
  // A live alloc on a live node keeps its claim.
  assert.equal(claimAction(claim("a", "n"), running, up), "keep");
  // A finished (or never-run, or garbage-collected) alloc on a live node: the node agent unmounts first.
  assert.equal(claimAction(claim("a", "n"), complete, up), "wait-node");
  assert.equal(claimAction(claim("a", "n"), neverRan, up), "wait-node");
  assert.equal(claimAction(claim("a", "n"), undefined, up), "wait-node");
  // A down or gone node loses its claims, whatever the server last heard of the alloc — a
  // single-writer claim only once the node's fence bound has passed (volumewatcher_decide.test.ts).
  const reader = { ...claim("a", "n"), Mode: "read" as const };
  assert.equal(claimAction(reader, lost, down), "release");
  assert.equal(claimAction(reader, running, down), "release");
  assert.equal(claimAction(reader, running, undefined), "release");
  assert.equal(claimAction(claim("a", "n"), running, down), "hold-fence");
  // A release already under way is finished, on any node.
  for (const s of ["node-detached", "controller-detached", "ready-to-free"] as const) {
    assert.equal(claimAction(claim("a", "n", s), complete, up), "release", s);
    assert.equal(claimAction(claim("a", "n", s), undefined, undefined), "release", s);
  }
});

test("volumewatcher decisions: a volume's claims sorted into release and wait", () => {
  let vol = makeVolume("v", {
    ReadClaims: { r1: { ...claim("r1", "up1"), Mode: "read" } },
    WriteClaims: { w1: claim("w1", "gone") },
  });
  vol = { ...vol, PastClaims: { p1: claim("p1", "up1", "node-detached") } };
  const allocs: Record<string, { ClientStatus: "running" | "complete"; DesiredStatus: "run" }> = {
    r1: complete,
    w1: running,
    p1: complete,
  };
  const work = volumeWork(vol, {
    alloc: (id) => allocs[id] as Allocation | undefined,
    node: (id) => (id === "up1" ? { ...up, StatusUpdatedAt: 1 } : undefined),
    facts: () => ({ now: 0, nodeDownSince: undefined, fenceHoldMs: 0, nodeHoldsNothing: false }),
  });
  assert.deepEqual(work.release.map((c) => c.AllocationID).sort(), ["p1", "w1"]);
  assert.deepEqual(
    work.waiting.map((c) => c.AllocationID),
    ["r1"],
  );
});

/** A fake walk that frees the claim in the store (or fails, while `failing` is set). */
function fakeReleaser(store: SqliteStateStore) {
  const calls: { volume: string; alloc: string; reported: ClaimState; at: number }[] = [];
  const state = { failing: false };
  const releaser: ClaimReleaser = {
    async releaseClaim(namespace, req, reported) {
      calls.push({ volume: req.VolumeID, alloc: req.AllocationID, reported, at: Date.now() });
      if (state.failing) throw new BerthError("ERR_CSI_PLUGIN_UNAVAILABLE", "controller unavailable");
      await store.txn((tx) => {
        const v = tx.getVolume(namespace, req.VolumeID);
        if (v) tx.putVolume(freeClaim(v, req.AllocationID));
      });
      return true;
    },
  };
  return { releaser, calls, state };
}

const fast = { scanIntervalMs: 5, minIntervalMs: 5, backoffBaseMs: 40, backoffMaxMs: 160, fenceHoldMs: 0 };

async function until(what: string, fn: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

test("volumewatcher: releases at start what the store already holds (resume), and nothing else", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(makeNode("live"));
    tx.putNode(makeNode("dead", { Status: "down" }));
    tx.putVolume(makeVolume("on-dead", { WriteClaims: { a1: claim("a1", "dead") } }));
    tx.putVolume(makeVolume("half-done", { WriteClaims: { a2: claim("a2", "live") } }));
    tx.putVolume(makeVolume("in-use", { WriteClaims: { a3: claim("a3", "live") } }));
  });
  // a2's node finished its node step before the "restart"; a3's alloc is unknown (waits on its live node).
  await store.txn((tx) =>
    tx.putVolume(setClaimState(tx.getVolume("default", "half-done")!, "a2", "node-detached")),
  );
  const { releaser, calls } = fakeReleaser(store);
  const w = new VolumeWatcher(store, releaser, nullLogger, fast);
  w.start();
  t.after(() => w.stop());
  await until("both releases", () => calls.length >= 2);
  await tick(50);
  assert.deepEqual(calls.map((c) => `${c.volume}:${c.alloc}:${c.reported}`).sort(), [
    "half-done:a2:taken",
    "on-dead:a1:taken",
  ]);
  assert.equal(Object.keys(store.getVolume("default", "in-use")!.WriteClaims).length, 1);
});

test("volumewatcher: wakes on a store change (a node going down)", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putVolume(makeVolume("v1", { WriteClaims: { a1: claim("a1", "n1") } }));
  });
  const { releaser, calls } = fakeReleaser(store);
  const w = new VolumeWatcher(store, releaser, nullLogger, fast);
  w.start();
  t.after(() => w.stop());
  await tick(60);
  assert.equal(calls.length, 0, "a claim of a live node (alloc unknown) waits for the node agent");
  await store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "down" }));
  await until("the release", () => calls.length === 1);
  assert.equal(Object.keys(store.getVolume("default", "v1")!.WriteClaims).length, 0);
});

test("volumewatcher: failures back off (capped), never a tight loop, and recover", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { Status: "down" }));
    tx.putVolume(makeVolume("v1", { WriteClaims: { a1: claim("a1", "n1") } }));
  });
  const { releaser, calls, state } = fakeReleaser(store);
  state.failing = true;
  const w = new VolumeWatcher(store, releaser, nullLogger, fast);
  w.start();
  t.after(() => w.stop());
  // Unrelated writes keep waking the watcher; they must not bypass the backoff.
  for (let i = 0; i < 40; i++) {
    await store.txn((tx) => tx.putNode(makeNode(`noise-${i}`)));
    await tick(15);
  }
  // ~600 ms at 40, 80, 160, 160... ms: at most a handful of attempts.
  assert.ok(calls.length >= 3 && calls.length <= 8, `attempts: ${calls.length}`);
  const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
  assert.ok(
    gaps.every((g) => g >= 25),
    `gaps ${JSON.stringify(gaps)}`,
  );
  assert.ok(
    gaps.every((g) => g <= 160 * 1.2 + 60),
    `capped: ${JSON.stringify(gaps)}`,
  );
  state.failing = false;
  await until("recovery", () => Object.keys(store.getVolume("default", "v1")!.WriteClaims).length === 0);
});

test("volumewatcher: stop cancels an in-flight release and waits for it", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putVolume(makeVolume("v1", { WriteClaims: { a1: claim("a1", "gone") } }));
  });
  let aborted = false;
  let started = false;
  const releaser: ClaimReleaser = {
    releaseClaim: (_ns, _req, _reported, signal) =>
      new Promise<boolean>((_resolve, reject) => {
        started = true;
        signal?.addEventListener("abort", () => {
          aborted = true;
          reject(new Error("aborted"));
        });
      }),
  };
  const w = new VolumeWatcher(store, releaser, nullLogger, fast);
  w.start();
  await until("the release to start", () => started);
  await w.stop();
  assert.equal(aborted, true);
});
