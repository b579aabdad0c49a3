/** `plugin status`'s Capacity section (src/cli/commands/plugin_capacity.ts). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { capacitySection } from "../../../src/cli/commands/plugin_capacity.js";

test("plugin status: a Capacity section per segment with the age of each answer; none when never measured", () => {
  const entry = (zone: string, bytes: number, stale: boolean) => ({
    Segments: (zone ? { zone } : {}) as Record<string, string>,
    AvailableBytes: bytes,
    MaximumVolumeSize: null,
    MinimumVolumeSize: null,
    MeasuredAt: 100_000,
    StaleAt: 280_000,
    Stale: stale,
  });
  const c = { Entries: [entry("a", 1024 ** 3, false), entry("b", 5, true)], LastError: "", ModifyIndex: 7 };
  assert.deepEqual(capacitySection(c, 112_000), [
    "",
    "Capacity",
    "Segment  Available             Measured",
    "zone=a   1.0 GiB (1073741824)  12s ago",
    "zone=b   5 B (5)               12s ago (stale)",
  ]);
  assert.deepEqual(
    capacitySection(
      { ...c, Entries: [entry("", 0, false)], LastError: "(all segments): ERR_CSI_UNAVAILABLE: down" },
      112_000,
    ).slice(3),
    ["(all)    0 B (0)    12s ago", "Last error: (all segments): ERR_CSI_UNAVAILABLE: down"],
  );
  assert.deepEqual(capacitySection(null, 0), []);
  assert.deepEqual(capacitySection({ ...c, Entries: [] }, 0), []);
});
