/**
 * CSIVolume.UpdateUsage (issue 15) against a real SQLite store: a node's figures land on the
 * volume it holds a claim on, only when they changed past the threshold (no write, no index move,
 * otherwise), never on a volume the node holds no claim on, with bad input refused by field and
 * nothing written, and secret values redacted from the plugin's message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { VolumeUsageEndpoint } from "../../../src/server/rpc/volume_usage.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { isBerthError } from "../../../src/structs/errors.js";
import type { ClaimState, VolumeClaim } from "../../../src/structs/volume.js";
import type { VolumeUsageReport } from "../../../src/structs/volume_usage.js";
import { makeVolume } from "../../builders/volume.js";

const MiB = 1024 * 1024;

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

const figures = (over: Partial<VolumeUsageReport> = {}): VolumeUsageReport => ({
  VolumeID: "v",
  Namespace: "default",
  BytesUsed: 5 * MiB,
  BytesAvailable: 5 * MiB,
  BytesTotal: 10 * MiB,
  InodesUsed: 3,
  InodesAvailable: 1000,
  InodesTotal: 1003,
  Abnormal: false,
  Message: "",
  ...over,
});

async function store(): Promise<SqliteStateStore> {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putVolume(
      makeVolume("v", { WriteClaims: { a1: claim("a1", "n1") }, Secrets: { token: "s3cr3t-value" } }),
    );
    tx.putVolume(makeVolume("w", { WriteClaims: { a2: claim("a2", "n2") } }));
    tx.putVolume(makeVolume("past", { PastClaims: { a3: claim("a3", "n1", "node-detached") } }));
  });
  return s;
}

test("volume usage: a node's figures land on its claimed volume, with the node and the time", async () => {
  const s = await store();
  const ep = new VolumeUsageEndpoint(s, () => 1_700_000_000_000);
  const resp = await ep.update({ NodeID: "n1", Volumes: [figures()] });
  assert.deepEqual([resp.Recorded, resp.Refused], [1, []]);
  const u = s.getVolume("default", "v")!.Usage!;
  assert.deepEqual(u, {
    NodeID: "n1",
    BytesUsed: 5 * MiB,
    BytesAvailable: 5 * MiB,
    BytesTotal: 10 * MiB,
    InodesUsed: 3,
    InodesAvailable: 1000,
    InodesTotal: 1003,
    Abnormal: false,
    Message: "",
    UpdateTime: 1_700_000_000_000 * 1e6,
  });
  s.close();
});

test("volume usage: a report within the threshold writes nothing; a change past it or of condition does", async () => {
  const s = await store();
  const ep = new VolumeUsageEndpoint(s);
  await ep.update({ NodeID: "n1", Volumes: [figures()] });
  const index = s.index();
  const first = s.getVolume("default", "v")!;
  // 100 KiB more and 10 more files: below 1 MiB / 64 inodes.
  const small = await ep.update({
    NodeID: "n1",
    Volumes: [figures({ BytesUsed: 5 * MiB + 100 * 1024, InodesUsed: 13 })],
  });
  assert.deepEqual(
    [small.Recorded, s.index(), s.getVolume("default", "v")!.ModifyIndex],
    [0, index, first.ModifyIndex],
  );
  const grew = await ep.update({ NodeID: "n1", Volumes: [figures({ BytesUsed: 6 * MiB })] });
  assert.equal(grew.Recorded, 1);
  assert.equal(s.getVolume("default", "v")!.Usage!.BytesUsed, 6 * MiB);
  assert.ok(s.index() > index);
  const sick = await ep.update({
    NodeID: "n1",
    Volumes: [figures({ BytesUsed: 6 * MiB, Abnormal: true, Message: "volume directory is missing" })],
  });
  assert.equal(sick.Recorded, 1);
  assert.deepEqual(
    [s.getVolume("default", "v")!.Usage!.Abnormal, s.getVolume("default", "v")!.Usage!.Message],
    [true, "volume directory is missing"],
  );
  s.close();
});

test("volume usage: a volume the node holds no live claim on is refused, the rest of the batch recorded", async () => {
  const s = await store();
  const ep = new VolumeUsageEndpoint(s);
  const resp = await ep.update({
    NodeID: "n1",
    Volumes: [
      figures({ VolumeID: "w" }), // n2's claim
      figures({ VolumeID: "past" }), // n1's claim, being released
      figures({ VolumeID: "missing" }),
      figures(),
    ],
  });
  assert.deepEqual(resp.Refused.sort(), ["default/missing", "default/past", "default/w"]);
  assert.equal(resp.Recorded, 1);
  assert.equal(s.getVolume("default", "w")!.Usage, undefined);
  assert.equal(s.getVolume("default", "past")!.Usage, undefined);
  s.close();
});

test("volume usage: bad input is refused naming the field, and nothing is written", async () => {
  const s = await store();
  const ep = new VolumeUsageEndpoint(s);
  const index = s.index();
  const cases: [unknown, string][] = [
    [{ NodeID: "n1", Volumes: "x" }, "Volumes"],
    [{ NodeID: "n1", Volumes: [figures(), { ...figures(), BytesUsed: -1 }] }, "Volumes[1].BytesUsed"],
    [{ NodeID: "n1", Volumes: [{ ...figures(), InodesTotal: 1.5 }] }, "Volumes[0].InodesTotal"],
    [{ NodeID: "n1", Volumes: [{ ...figures(), VolumeID: "../x" }] }, "Volumes[0].VolumeID"],
    [{ NodeID: "n1", Volumes: [{ ...figures(), Abnormal: "yes" }] }, "Volumes[0].Abnormal"],
    [{ NodeID: "n1", Volumes: Array.from({ length: 1001 }, () => figures()) }, "Volumes"],
  ];
  for (const [req, field] of cases) {
    await assert.rejects(
      ep.update(req as never),
      (e: unknown) => isBerthError(e) && e.code === "ERR_VALIDATION" && e.field === field,
      field,
    );
  }
  assert.equal(s.index(), index);
  assert.equal(s.getVolume("default", "v")!.Usage, undefined);
  s.close();
});

test("volume usage: the volume's secret values never reach the stored message; long messages are cut", async () => {
  const s = await store();
  const ep = new VolumeUsageEndpoint(s);
  await ep.update({
    NodeID: "n1",
    Volumes: [figures({ Abnormal: true, Message: "mount with token=s3cr3t-value failed" })],
  });
  assert.equal(s.getVolume("default", "v")!.Usage!.Message, "mount with token=[REDACTED] failed");
  await ep.update({ NodeID: "n1", Volumes: [figures({ Abnormal: true, Message: "x".repeat(5000) })] });
  assert.equal(s.getVolume("default", "v")!.Usage!.Message.length, 1024);
  s.close();
});
