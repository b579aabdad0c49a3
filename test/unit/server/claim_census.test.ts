/**
 * The claim census behind the server's claim gauges (volumewatcher/claim_census.ts): totals kept by
 * deltas as volumes are read again, pending releases by state and failing step, the oldest pending
 * release's age carried across reads of the same claim, and volume usage read defensively.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClaimCensus } from "../../../src/server/volumewatcher/claim_census.js";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { claimOf } from "../../builders/claim.js";
import { makeVolume } from "../../builders/volume.js";

const a1 = { ID: "a1", NodeID: "n1" };
const a2 = { ID: "a2", NodeID: "n2" };

test("claims by mode and pending releases follow each volume's latest read, by delta", () => {
  const c = new ClaimCensus();
  const taken = claimOf(a1);
  const v1 = makeVolume("v1", { WriteClaims: { a1: taken } });
  const v2 = makeVolume("v2", { ReadClaims: { a2: { ...claimOf(a2), Mode: "read" } } });
  c.set("default/v1", v1, [], 1_000);
  c.set("default/v2", v2, [], 1_000);
  let s = c.snapshot(1_000);
  assert.deepEqual(s.claims, { read: 1, write: 1 });
  assert.equal(s.pendingByState.size, 0);
  assert.equal(s.oldestPendingSeconds, 0);

  // a1's alloc finished: the watcher waits for its node (still taken), then the node step fails.
  c.set("default/v1", v1, [taken], 5_000);
  const failing = {
    ...taken,
    ReleaseStatus: {
      Step: "node-unpublish" as const,
      LastError: "x",
      Attempts: 2,
      NextAttempt: 0,
      UpdateTime: 0,
    },
  };
  c.set("default/v1", { ...v1, WriteClaims: { a1: failing } }, [failing], 9_000);
  s = c.snapshot(65_000);
  assert.deepEqual([...s.pendingByState], [["taken", 1]]);
  assert.deepEqual([...s.failingByStep], [["node-unpublish", 1]]);
  assert.equal(
    s.oldestPendingSeconds,
    60,
    "pending since it was first seen pending, not since the last read",
  );

  // The node detached: the claim moved to PastClaims; then it was freed.
  const past = claimOf(a1, "node-detached");
  c.set("default/v1", makeVolume("v1", { PastClaims: { a1: past } }), [past], 70_000);
  s = c.snapshot(70_000);
  assert.deepEqual(s.claims, { read: 1, write: 0 });
  assert.deepEqual([...s.pendingByState], [["node-detached", 1]]);
  assert.equal(s.failingByStep.size, 0);
  c.set("default/v1", makeVolume("v1"), [], 71_000);
  c.forget("default/v2");
  s = c.snapshot(71_000);
  assert.deepEqual(s.claims, { read: 0, write: 0 });
  assert.equal(s.pendingByState.size, 0);
  assert.equal(s.oldestPendingSeconds, 0);
});

test("volume usage is read defensively and never keeps the plugin's message", () => {
  const c = new ClaimCensus();
  const withUsage = (usage: unknown) =>
    ({ ...makeVolume("v1", { WriteClaims: { a1: claimOf(a1) } }), Usage: usage }) as CSIVolume;
  c.set(
    "default/v1",
    withUsage({
      NodeID: "n1",
      BytesUsed: 5 << 20,
      BytesAvailable: 10,
      BytesTotal: "lots",
      InodesUsed: Number.NaN,
      Abnormal: true,
      Message: "secret-ish text",
    }),
    [],
    0,
  );
  assert.deepEqual(c.snapshot(0).usage, [
    {
      namespace: "default",
      volumeId: "v1",
      pluginId: "p1",
      nodeId: "n1",
      bytesUsed: 5 << 20,
      bytesAvailable: 10,
      abnormal: true,
    },
  ]);
  c.set("default/v1", withUsage(null), [], 0);
  assert.deepEqual(c.snapshot(0).usage, []);
  c.set("default/v1", withUsage("x"), [], 0);
  assert.deepEqual(c.snapshot(0).usage, []);
});

test("the controller's condition sets the abnormal flag, alone or with the node's usage", () => {
  const c = new ClaimCensus();
  const vol = (over: Record<string, unknown>): CSIVolume => ({ ...makeVolume("v1"), ...over });
  const ctl = (Abnormal: boolean) => ({ Abnormal, Message: "m", UpdateTime: 1 });
  const only = { namespace: "default", volumeId: "v1", pluginId: "p1", nodeId: "" };
  // An unclaimed volume with only the controller's condition is still counted.
  c.set("default/v1", vol({ ControllerCondition: ctl(true) }), [], 0);
  assert.deepEqual(c.snapshot(0).usage, [{ ...only, abnormal: true }]);
  c.set("default/v1", vol({ ControllerCondition: ctl(false) }), [], 0);
  assert.deepEqual(c.snapshot(0).usage, [{ ...only, abnormal: false }]);
  const usage = { NodeID: "n1", BytesUsed: 1, Abnormal: false };
  c.set("default/v1", vol({ Usage: usage, ControllerCondition: ctl(true) }), [], 0);
  assert.deepEqual(c.snapshot(0).usage, [{ ...only, nodeId: "n1", bytesUsed: 1, abnormal: true }]);
  c.set("default/v1", vol({ Usage: { ...usage, Abnormal: true }, ControllerCondition: ctl(false) }), [], 0);
  assert.equal(c.snapshot(0).usage[0]!.abnormal, true, "either side abnormal");
  c.set("default/v1", vol({ ControllerCondition: "x" }), [], 0);
  assert.deepEqual(c.snapshot(0).usage, []);
});
