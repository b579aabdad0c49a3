/** The "changed enough to report and write" rule of volume usage (structs/volume_usage.ts). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { usageChanged, type VolumeUsageFigures } from "../../../src/structs/volume_usage.js";

const MiB = 1024 * 1024;
const base: VolumeUsageFigures = {
  BytesUsed: 10 * MiB,
  BytesAvailable: 90 * MiB,
  BytesTotal: 100 * MiB,
  InodesUsed: 10,
  InodesAvailable: 10_000,
  InodesTotal: 10_010,
  Abnormal: false,
  Message: "",
};

test("usage: first figures, a condition change, or a move past the threshold count as changed", () => {
  assert.equal(usageChanged(undefined, base), true);
  assert.equal(usageChanged(null, base), true);
  assert.equal(usageChanged(base, { ...base }), false);
  assert.equal(usageChanged(base, { ...base, Abnormal: true }), true);
  assert.equal(usageChanged(base, { ...base, Message: "slow" }), true);
  // 1 MiB is the floor for bytes, 64 for inodes.
  assert.equal(usageChanged(base, { ...base, BytesUsed: 10 * MiB + MiB - 1 }), false);
  assert.equal(usageChanged(base, { ...base, BytesUsed: 11 * MiB }), true);
  assert.equal(usageChanged(base, { ...base, BytesAvailable: 85 * MiB }), true);
  assert.equal(usageChanged(base, { ...base, InodesUsed: 73 }), false);
  assert.equal(usageChanged(base, { ...base, InodesUsed: 74 }), true);
});

test("usage: on a large volume the threshold is 0.1% of its size", () => {
  const big = { ...base, BytesTotal: 1000 * 1024 * MiB, BytesAvailable: 900 * 1024 * MiB };
  // 0.1% of 1000 GiB is ~1 GiB: 500 MiB more is not a change, 2 GiB is.
  assert.equal(usageChanged(big, { ...big, BytesUsed: big.BytesUsed + 500 * MiB }), false);
  assert.equal(usageChanged(big, { ...big, BytesUsed: big.BytesUsed + 2048 * MiB }), true);
});
