/**
 * A claim's release status (issue 8): recorded from node reports (CSIVolume.ReleaseProgress) and by
 * the volumewatcher for the controller step, dropped when the claim advances, refused for a claim
 * of another node, stale node reports dropped; the empty plugin GC that runs on plugin changes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { GarbageCollector } from "../../../src/server/gc/collector.js";
import { reportReleaseProgress } from "../../../src/server/rpc/release_progress.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import {
  MAX_RELEASE_ERROR_CHARS,
  recordReleaseStatus,
} from "../../../src/server/volumewatcher/release_status.js";
import { VolumeWatcher } from "../../../src/server/volumewatcher/watcher.js";
import { freeClaim, setClaimState } from "../../../src/structs/claim.js";
import { BerthError, isBerthError } from "../../../src/structs/errors.js";
import type { VolumeReleaseProgressRequest } from "../../../src/structs/rpc.js";
import { withReleaseStatus, type ClaimState, type VolumeClaim } from "../../../src/structs/volume.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
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

const report = (over: Partial<VolumeReleaseProgressRequest> = {}): VolumeReleaseProgressRequest => ({
  VolumeID: "v",
  Namespace: "default",
  AllocationID: "a1",
  NodeID: "n1",
  Step: "node-unpublish",
  LastError: "CSI NodeUnpublishVolume failed: INTERNAL: lsblk: command not found",
  Attempts: 2,
  NextAttempt: 1_700_000_004_000 * 1e6,
  ...over,
});

async function storeWithClaim(c: VolumeClaim): Promise<SqliteStateStore> {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => tx.putVolume(makeVolume("v", { WriteClaims: { [c.AllocationID]: c } })));
  return s;
}

test("release status: a node's report lands on its claim and shows in the record", async () => {
  const s = await storeWithClaim(claim("a1", "n1"));
  const resp = await reportReleaseProgress(s, report());
  assert.equal(resp.Recorded, true);
  const st = s.getVolume("default", "v")!.WriteClaims.a1!.ReleaseStatus!;
  assert.deepEqual(
    [st.Step, st.LastError, st.Attempts, st.NextAttempt],
    ["node-unpublish", report().LastError, 2, 1_700_000_004_000 * 1e6],
  );
  assert.ok(st.UpdateTime > 0);
  s.close();
});

test("release status: another node's claim is refused; stale and unknown reports record nothing", async () => {
  const s = await storeWithClaim(claim("a1", "n1"));
  await assert.rejects(
    reportReleaseProgress(s, report({ NodeID: "n2" })),
    (e: unknown) => isBerthError(e) && e.code === "ERR_PERMISSION_DENIED",
  );
  assert.equal((await reportReleaseProgress(s, report({ AllocationID: "gone" }))).Recorded, false);
  // The node already reported node-detached: a late report of its node step is dropped.
  await s.txn((tx) => tx.putVolume(setClaimState(tx.getVolume("default", "v")!, "a1", "node-detached")));
  assert.equal((await reportReleaseProgress(s, report())).Recorded, false);
  assert.equal(s.getVolume("default", "v")!.PastClaims.a1!.ReleaseStatus, undefined);
  // The server unpublish call can fail in any state.
  assert.equal((await reportReleaseProgress(s, report({ Step: "server-unpublish" }))).Recorded, true);
  s.close();
});

test("release status: bad input names the field; a node cannot report a server step", async () => {
  const s = await storeWithClaim(claim("a1", "n1"));
  for (const [over, field] of [
    [{ Step: "controller-unpublish" }, "Step"],
    [{ Step: "sideways" }, "Step"],
    [{ Attempts: -1 }, "Attempts"],
    [{ NextAttempt: "soon" }, "NextAttempt"],
    [{ LastError: 42 }, "LastError"],
    [{ VolumeID: "../etc" }, "VolumeID"],
  ] as const) {
    await assert.rejects(
      reportReleaseProgress(s, report(over as unknown as Partial<VolumeReleaseProgressRequest>)),
      (e: unknown) => e instanceof BerthError && e.code === "ERR_VALIDATION" && e.field === field,
      field,
    );
  }
  s.close();
});

test("release status: a long error is capped; advancing or freeing the claim drops the status", async () => {
  const s = await storeWithClaim(claim("a1", "n1"));
  await recordReleaseStatus(s, {
    namespace: "default",
    volumeId: "v",
    allocId: "a1",
    step: "node-unstage",
    lastError: "x".repeat(5000),
    attempts: 1,
    nextAttemptMs: 0,
  });
  let vol = s.getVolume("default", "v")!;
  assert.equal(vol.WriteClaims.a1!.ReleaseStatus!.LastError.length, MAX_RELEASE_ERROR_CHARS);
  assert.equal(vol.WriteClaims.a1!.ReleaseStatus!.NextAttempt, 0, "unknown next attempt stays 0");
  vol = setClaimState(vol, "a1", "node-detached");
  assert.equal(vol.PastClaims.a1!.ReleaseStatus, undefined, "the step succeeded");
  const again = withReleaseStatus(vol, "a1", {
    Step: "controller-unpublish",
    LastError: "e",
    Attempts: 1,
    NextAttempt: 1,
    UpdateTime: 1,
  });
  assert.equal(again.PastClaims.a1!.ReleaseStatus!.Step, "controller-unpublish");
  assert.equal(setClaimState(again, "a1", "controller-detached").PastClaims.a1!.ReleaseStatus, undefined);
  assert.equal(freeClaim(again, "a1").PastClaims.a1, undefined);
  assert.equal(withReleaseStatus(again, "a1", null).PastClaims.a1!.ReleaseStatus, undefined);
  s.close();
});

test(
  "volumewatcher: a failing controller unpublish is recorded on the claim with its next attempt",
  { timeout: 10_000 },
  async () => {
    const s = new SqliteStateStore(null);
    await s.txn((tx) => {
      tx.putNode(
        makeNode("n1", {
          CSIControllerPlugins: { p: controllerInfo("p") },
          CSINodePlugins: { p: nodePluginInfo("p") },
        }),
      );
      tx.putVolume(
        makeVolume("v", { PluginID: "p", PastClaims: { a1: claim("a1", "n1", "node-detached") } }),
      );
    });
    assert.equal(s.getPlugin("p")!.ControllerRequired, true);
    let fail = true;
    const releaser = {
      releaseClaim: async () => {
        if (fail)
          throw new BerthError("ERR_CSI_INTERNAL", "CSI ControllerUnpublishVolume failed: INTERNAL: boom");
        await s.txn((tx) => tx.putVolume(freeClaim(tx.getVolume("default", "v")!, "a1")));
        return true;
      },
    };
    const w = new VolumeWatcher(s, releaser, nullLogger, {
      scanIntervalMs: 1,
      minIntervalMs: 1,
      backoffBaseMs: 20,
      backoffMaxMs: 40,
    });
    w.start();
    try {
      const before = Date.now();
      let st;
      while (!(st = s.getVolume("default", "v")!.PastClaims.a1?.ReleaseStatus)) await tick(5);
      assert.equal(st.Step, "controller-unpublish");
      assert.match(st.LastError, /ControllerUnpublishVolume failed: INTERNAL: boom/);
      assert.ok(st.Attempts >= 1);
      assert.ok(st.NextAttempt >= before * 1e6, "the next attempt, in Unix ns");
      fail = false;
      while (s.getVolume("default", "v")!.PastClaims.a1) await tick(5);
    } finally {
      await w.stop();
      s.close();
    }
  },
);

test(
  "plugin gc: an empty plugin goes as soon as it is empty, not at the next periodic pass",
  { timeout: 10_000 },
  async () => {
    const s = new SqliteStateStore(null);
    const gc = new GarbageCollector(s, nullLogger, { intervalMs: 60 * 60_000 });
    await s.txn((tx) => tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } })));
    gc.start();
    try {
      await tick(20);
      assert.ok(s.getPlugin("p1"), "a plugin with an instance stays");
      await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, CSINodePlugins: {} }));
      while (s.getPlugin("p1")) await tick(5);
    } finally {
      await gc.stop();
      s.close();
    }
  },
);
