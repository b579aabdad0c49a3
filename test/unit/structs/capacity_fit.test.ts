/**
 * structs/capacity_fit.ts: which segments a new volume fits in from the measured capacities, and
 * what a create sends. Known-too-small segments are left out; unknown and stale ones are allowed;
 * a create that fits nowhere is refused naming each segment's free bytes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { CapacityEntry } from "../../../src/structs/capacity.js";
import { placeCreate, segmentVerdict, segmentsWithCapacity } from "../../../src/structs/capacity_fit.js";

const GiB = 1024 ** 3;
const NOW = 1_000_000;

function entry(
  segments: Record<string, string>,
  available: number,
  over: Partial<CapacityEntry> = {},
): CapacityEntry {
  return {
    Segments: segments,
    AvailableBytes: available,
    MaximumVolumeSize: null,
    MinimumVolumeSize: null,
    MeasuredAt: NOW - 10_000,
    StaleAt: NOW + 170_000,
    ...over,
  };
}

const a = { Segments: { zone: "a" } };
const b = { Segments: { zone: "b" } };
const c = { Segments: { zone: "c" } };
const entries = [entry({ zone: "a" }, 1 * GiB), entry({ zone: "b" }, 5 * GiB)];

test("segmentsWithCapacity keeps the segments not known too small, in order", () => {
  assert.deepEqual(segmentsWithCapacity(entries, [a, b, c], 2 * GiB, NOW), [b, c], "c was never measured");
  assert.deepEqual(segmentsWithCapacity(entries, [a, b], 1 * GiB, NOW), [a, b], "exactly the free bytes fit");
  assert.deepEqual(segmentsWithCapacity(entries, [a, b], 6 * GiB, NOW), []);
  assert.deepEqual(segmentsWithCapacity(entries, [a, b], 0, NOW), [a, b], "no capacity_min fits anywhere");
  assert.deepEqual(segmentsWithCapacity([], [a, b], 6 * GiB, NOW), [a, b], "nothing measured: all allowed");
});

test("a stale entry counts as unknown, so its segment is allowed", () => {
  const stale = [entry({ zone: "a" }, 1 * GiB, { StaleAt: NOW })];
  assert.equal(segmentVerdict(stale, a.Segments, 2 * GiB, NOW).state, "unknown");
  assert.equal(segmentVerdict(stale, a.Segments, 2 * GiB, NOW - 1).state, "too-small");
  assert.deepEqual(segmentsWithCapacity(stale, [a], 2 * GiB, NOW), [a]);
});

test("the plugin's maximum volume size limits a segment with room", () => {
  const capped = [entry({ zone: "a" }, 10 * GiB, { MaximumVolumeSize: 1 * GiB })];
  assert.equal(segmentVerdict(capped, a.Segments, 2 * GiB, NOW).state, "too-small");
  assert.equal(segmentVerdict(capped, a.Segments, 1 * GiB, NOW).state, "fits");
});

test("a coarse segment is decided by its finer entries: fits if any fits or is unknown", () => {
  const hosts = [
    entry({ zone: "a", host: "n1" }, 1 * GiB),
    entry({ zone: "a", host: "n2" }, 3 * GiB),
    entry({ zone: "b", host: "n3" }, 1 * GiB),
  ];
  assert.equal(segmentVerdict(hosts, a.Segments, 2 * GiB, NOW).state, "fits");
  assert.equal(segmentVerdict(hosts, b.Segments, 2 * GiB, NOW).state, "too-small");
  assert.equal(segmentVerdict(hosts, { host: "n9" }, 2 * GiB, NOW).state, "unknown");
});

test("placeCreate without a topology request steers to the segments that fit, largest first", () => {
  const three = [...entries, entry({ zone: "c" }, 3 * GiB)];
  assert.deepEqual(placeCreate(three, null, 2 * GiB, NOW), {
    request: { Required: [b, c], Preferred: [b, c] },
  });
  // Nothing known too small: the request goes as it came.
  assert.deepEqual(placeCreate(three, null, 1 * GiB, NOW), { request: null });
  // The user's preference among the fitting segments comes first.
  assert.deepEqual(placeCreate(three, { Required: null, Preferred: [c, a] }, 2 * GiB, NOW), {
    request: { Required: [b, c], Preferred: [c, b] },
  });
});

test("placeCreate with required segments drops the ones known too small", () => {
  assert.deepEqual(placeCreate(entries, { Required: [a, b], Preferred: [a] }, 2 * GiB, NOW), {
    request: { Required: [b], Preferred: [] },
  });
  assert.deepEqual(placeCreate(entries, { Required: [a, c], Preferred: null }, 2 * GiB, NOW), {
    request: { Required: [c], Preferred: [] },
  });
});

test("placeCreate refuses when no segment fits, naming each one's free bytes", () => {
  const placed = placeCreate(entries, null, 6 * GiB, NOW);
  assert.ok("refused" in placed);
  assert.match(placed.refused, /no topology segment has capacity for 6442450944 bytes/);
  assert.match(placed.refused, /zone=a has 1073741824 bytes available \(measured 10s ago\)/);
  assert.match(placed.refused, /zone=b has 5368709120 bytes available/);
  const req = placeCreate(entries, { Required: [a], Preferred: null }, 2 * GiB, NOW);
  assert.ok("refused" in req && /zone=a has 1073741824/.test(req.refused) && !/zone=b/.test(req.refused));
});

test("a whole-plugin entry (no topology) decides alone", () => {
  const whole = [entry({}, 1 * GiB)];
  assert.ok("refused" in placeCreate(whole, null, 2 * GiB, NOW));
  assert.deepEqual(placeCreate(whole, null, 1 * GiB, NOW), { request: null });
  const r = placeCreate(whole, null, 2 * GiB, NOW);
  assert.ok("refused" in r && /\(all segments\) has 1073741824 bytes available/.test(r.refused));
});
