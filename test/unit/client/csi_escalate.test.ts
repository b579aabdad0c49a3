/**
 * The escalation of a hung node unmount (csi_escalate.ts) on its own, with fakes for the volume
 * manager, registry and server RPC and a real (in-memory) client state DB: a node step still
 * running at the bound is cancelled and escalated (lazy detach, a durable record, a task event, an
 * abnormal node condition, then the plugin told until it answers); one that finishes in time, a
 * bound of 0 and a shutdown are not.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { UnmountEscalation, type EscalatedRelease } from "../../../src/client/allocrunner/csi_escalate.js";
import type { CsiHookConfig } from "../../../src/client/allocrunner/csi_types.js";
import type { DetachedVolume } from "../../../src/client/csimanager/lazy_detach.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import type { CsiVolumeStub } from "../../../src/client/state/types.js";
import { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { plugin } from "../../builders/client_records.js";

const stub: CsiVolumeStub = {
  volumeId: "vol1",
  namespace: "default",
  pluginId: "fake",
  externalId: "ext-1",
  usage: { readOnly: false, accessMode: "single-node-writer", attachmentMode: "file-system" },
  stagingPath: "/host/staging/vol1",
  targetPath: "/host/per-alloc/a1/vol1",
};

function harness(boundMs: number, tellFailures = 0) {
  const db = StateDB.open(":memory:");
  const calls: string[] = [];
  const events: { type: string; message: string }[] = [];
  const reports: unknown[] = [];
  let failures = tellFailures;
  let told!: () => void;
  const pluginTold = new Promise<void>((r) => (told = r));
  const cfg = {
    nodeId: "node-1",
    log: nullLogger,
    unmountEscalateAfterMs: boundMs,
    attention: db,
    emitEvent: (type: string, message: string) => events.push({ type, message }),
    rpc: {
      call: async (method: string, req: unknown) => {
        calls.push(`rpc:${method}`);
        reports.push(req);
        return { Recorded: 1, Refused: [], Index: 1 };
      },
    },
    registry: { waitForPlugin: async () => plugin() },
    volumeManager: {
      detachHung: async (allocId: string, s: CsiVolumeStub): Promise<DetachedVolume> => {
        calls.push(`detach:${allocId}`);
        return { targetPath: s.targetPath, stagingPath: s.stagingPath };
      },
      tellPluginDetached: async () => {
        calls.push("tell");
        if (failures-- > 0) throw new BerthError("ERR_CSI_ABORTED", "an operation is in progress");
        setImmediate(told);
      },
    },
  } as unknown as CsiHookConfig;
  const shutdown = new AbortController();
  const release: EscalatedRelease = {
    allocId: "a1",
    alias: "data",
    stub,
    guard: { stillMounted: () => true, unmounted: () => undefined },
    log: nullLogger,
    signal: shutdown.signal,
  };
  const escalation = new UnmountEscalation(cfg, { baseMs: 1, maxMs: 5, jitter: 0 });
  return { db, calls, events, reports, escalation, release, shutdown, pluginTold };
}

/** A node step that hangs until its signal fires (then fails as an aborted call does). */
function hangingStep(signal: AbortSignal): Promise<void> {
  return new Promise((_, reject) =>
    signal.addEventListener("abort", () => reject(new BerthError("ERR_CSI_DEADLINE_EXCEEDED", "aborted")), {
      once: true,
    }),
  );
}

test("a node step still running at the bound is escalated: detached, recorded, reported, the plugin told later", async () => {
  const h = harness(30, 2);
  await h.escalation.bounded(h.release, hangingStep);
  assert.deepEqual(h.calls.slice(0, 2), ["detach:a1", "rpc:CSIVolume.UpdateUsage"]);
  const [rec] = h.db.listVolumeAttention();
  assert.deepEqual(
    [rec?.volumeId, rec?.alias, rec?.targetPath, rec?.stagingPath, rec?.pluginTold],
    ["vol1", "data", stub.targetPath, stub.stagingPath, false],
  );
  assert.equal(h.db.countVolumeAttention(), 1);
  assert.deepEqual(
    h.events.map((e) => e.type),
    ["Volume Unmount Escalated"],
  );
  assert.match(h.events[0]!.message, /"data" \(vol1\) did not finish within 0.03s; berth detached it lazily/);
  const report = h.reports[0] as { NodeID: string; Volumes: { Abnormal: boolean; Message: string }[] };
  assert.equal(report.NodeID, "node-1");
  assert.equal(report.Volumes[0]!.Abnormal, true);
  assert.match(report.Volumes[0]!.Message, /^needs attention: /);
  // In the background: two refusals (the plugin's hung call still holds the volume), then an answer.
  await h.pluginTold;
  assert.equal(h.calls.filter((c) => c === "tell").length, 3);
  await new Promise((r) => setImmediate(r));
  assert.equal(h.db.listVolumeAttention()[0]?.pluginTold, true);
  // Mounted again on this node: the record goes.
  h.db.clearVolumeAttention("default", "vol1");
  assert.equal(h.db.countVolumeAttention(), 0);
});

test("a node step that finishes within the bound is not escalated", async () => {
  const h = harness(5_000);
  await h.escalation.bounded(h.release, async () => undefined);
  assert.deepEqual(h.calls, []);
  assert.equal(h.db.countVolumeAttention(), 0);
});

test("a node step's own failure passes through, not escalated", async () => {
  const h = harness(5_000);
  await assert.rejects(
    h.escalation.bounded(h.release, async () => {
      throw new BerthError("ERR_CSI_INVALID_ARGUMENT", "bad");
    }),
    /bad/,
  );
  assert.deepEqual(h.calls, []);
});

test("bound 0: never escalated; the node step runs under the shutdown signal alone", async () => {
  const h = harness(0);
  let seen: AbortSignal | undefined;
  const running = h.escalation.bounded(h.release, (signal) => {
    seen = signal;
    return hangingStep(signal);
  });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(seen, h.release.signal);
  h.shutdown.abort();
  await assert.rejects(running);
  assert.deepEqual(h.calls, []);
});

test("shutdown during the node step passes through: no detach", async () => {
  const h = harness(5_000);
  const running = h.escalation.bounded(h.release, hangingStep);
  h.shutdown.abort();
  await assert.rejects(running);
  assert.deepEqual(h.calls, []);
  assert.equal(h.db.countVolumeAttention(), 0);
});
