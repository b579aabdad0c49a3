/**
 * The volumewatcher reads only what changed: with many unrelated volumes stored, a claim to release
 * costs it a read of that volume, not of every volume; releases still happen for every claim whose
 * volume, alloc or node changed — also the claim of an alloc the garbage collector already removed.
 * Over an in-memory store wrapped to count the volume records the watcher reads.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateStore } from "../../../src/server/state/store.js";
import { VolumeWatcher, type ClaimReleaser } from "../../../src/server/volumewatcher/watcher.js";
import { freeClaim, setClaimState } from "../../../src/structs/claim.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";

const UNRELATED = 1000;

function claim(allocId: string, nodeId: string): VolumeClaim {
  return {
    AllocationID: allocId,
    NodeID: nodeId,
    ExternalNodeID: `ext-${nodeId}`,
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    State: "taken",
  };
}

/** The store, counting every volume record handed out by its reads. */
function counting(store: SqliteStateStore) {
  const reads = { volumes: 0, fullLists: 0 };
  const counted = new Proxy(store, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const out: unknown = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (prop === "listVolumes") reads.fullLists++;
        if (prop === "listVolumes" || prop === "volumesModifiedSince")
          reads.volumes += (out as unknown[]).length;
        if (prop === "getVolume" && out !== undefined) reads.volumes++;
        return out;
      };
    },
  });
  return { store: counted as StateStore, reads };
}

async function until(what: string, fn: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

test("volumewatcher: with 1,000 unrelated volumes, a release reads the changed volume only", async (t) => {
  const raw = new SqliteStateStore(null);
  const job = plainJob("j");
  const a1 = allocOf(job, "n1");
  const a2 = allocOf(job, "n2");
  await raw.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putNode(makeNode("n2"));
    tx.putJob(job);
    tx.putAlloc(a1);
    tx.putAlloc(a2);
    for (let i = 0; i < UNRELATED; i++) tx.putVolume(makeVolume(`other-${i}`));
    tx.putVolume(makeVolume("by-state", { WriteClaims: { [a1.ID]: claim(a1.ID, "n1") } }));
    tx.putVolume(makeVolume("by-node", { WriteClaims: { [a2.ID]: claim(a2.ID, "n2") } }));
  });
  const { store, reads } = counting(raw);
  const released: string[] = [];
  const releaser: ClaimReleaser = {
    async releaseClaim(namespace, req) {
      released.push(req.VolumeID);
      await raw.txn((tx) => {
        const v = tx.getVolume(namespace, req.VolumeID);
        if (v) tx.putVolume(freeClaim(v, req.AllocationID));
      });
      return true;
    },
  };
  const watcher = new VolumeWatcher(store, releaser, nullLogger, {
    scanIntervalMs: 5,
    minIntervalMs: 5,
    fenceHoldMs: 0,
  });
  watcher.start();
  t.after(async () => {
    await watcher.stop();
    raw.close();
  });
  // The start-up pass reads every volume once, and releases nothing: every claim is in use.
  await until("the start-up pass", () => reads.fullLists === 1);
  await tick(50);
  assert.equal(released.length, 0, "nothing released at start");
  assert.equal(reads.volumes, UNRELATED + 2);

  // The node agent finished the node step of one claim: that volume is written, and released.
  reads.volumes = 0;
  await raw.txn((tx) =>
    tx.putVolume(setClaimState(tx.getVolume("default", "by-state")!, a1.ID, "node-detached")),
  );
  await until("the node-detached claim released", () => released.includes("by-state"));
  // The other claim's alloc is garbage collected, then its node goes down: found by the claim's node.
  await raw.txn((tx) => tx.deleteAlloc(a2.ID));
  await raw.txn((tx) => tx.putNode({ ...tx.getNode("n2")!, Status: "down" }));
  await until("the down node's claim released", () => released.includes("by-node"));
  await until("both volumes free", () =>
    ["by-state", "by-node"].every(
      (id) => Object.keys(raw.getVolume("default", id)!.WriteClaims).length === 0,
    ),
  );
  await tick(50);
  assert.deepEqual(released.sort(), ["by-node", "by-state"]);
  assert.equal(reads.fullLists, 1, "no pass after the first reads every volume");
  // Each of the two volumes is read a few times (the pass that finds it, the run, the pass after
  // its release); the 1,000 others never.
  assert.ok(reads.volumes <= 10, `the watcher read ${reads.volumes} volume records after start-up`);
});
