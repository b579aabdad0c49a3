/**
 * The Usage section of `berth volume status`: each condition line says which side reported it
 * (the node plugin's NodeGetVolumeStats, the controller plugin's ControllerGetVolume), and a
 * volume only the controller reported on still gets its condition line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { usageSection } from "../../../src/cli/commands/volume_usage.js";

const NOW = 1_700_000_000_000;
const usage = {
  NodeID: "3f1c9a2b-0000-0000-0000-000000000000",
  BytesUsed: 5 << 20,
  BytesAvailable: 5 << 20,
  BytesTotal: 10 << 20,
  InodesUsed: 3,
  InodesAvailable: 97,
  InodesTotal: 100,
  Abnormal: false,
  Message: "",
  UpdateTime: (NOW - 12_000) * 1e6,
};
const controller = {
  Abnormal: true,
  Message: "volume directory /s/v is missing",
  UpdateTime: (NOW - 3_000) * 1e6,
};

const pairs = (lines: string[]) =>
  Object.fromEntries(
    lines.flatMap((l) => {
      const m = /^(\S.*?)\s+= (.*)$/.exec(l);
      return m ? [[m[1]!, m[2]!]] : [];
    }),
  );

test("volume status Usage: node and controller conditions on their own lines", () => {
  const kv = pairs(usageSection(usage, false, NOW, controller));
  assert.equal(kv["Node Condition"], "healthy");
  assert.equal(kv["Node ID"], "3f1c9a2b");
  assert.equal(kv["Controller Condition"], "abnormal: volume directory /s/v is missing");
  assert.ok(kv["Controller Updated"]);
  assert.equal(kv["Condition"], undefined, "no line leaves its side unsaid");
});

test("volume status Usage: only the controller reported", () => {
  const lines = usageSection(null, false, NOW, controller);
  assert.deepEqual(lines.slice(0, 3), [
    "",
    "Usage",
    "No usage reported (not published on a node whose plugin reports volume stats)",
  ]);
  assert.equal(pairs(lines)["Controller Condition"], "abnormal: volume directory /s/v is missing");
});

test("volume status Usage: nothing from a server that knows neither field", () => {
  assert.deepEqual(usageSection(undefined, false, NOW, undefined), []);
  assert.equal(pairs(usageSection(usage, false, NOW, null))["Controller Condition"], undefined);
});
