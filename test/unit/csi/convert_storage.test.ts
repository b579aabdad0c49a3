/** Conversions of the snapshot, expansion and ListVolumes messages (src/csi/convert.ts). */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  capacityRangeToWire,
  int64ValueFromWire,
  listVolumesEntryFromWire,
  snapshotFromWire,
  snapshotToWire,
  timestampFromWire,
  timestampToWire,
} from "../../../src/csi/convert.js";

void describe("CSI storage conversions", () => {
  void it("timestamps: Unix milliseconds ↔ seconds + nanos, absent is 0", () => {
    assert.deepEqual(timestampToWire(1_700_000_123_456), { seconds: 1_700_000_123, nanos: 456_000_000 });
    assert.equal(timestampFromWire({ seconds: 1_700_000_123, nanos: 456_999_999 }), 1_700_000_123_456);
    assert.equal(timestampFromWire(null), 0);
  });

  void it("snapshots round-trip; a missing creation time stays missing", () => {
    const s = {
      snapshotId: "snap-1",
      sourceVolumeId: "vol-1",
      sizeBytes: 4096,
      creationTime: 1_700_000_000_000,
      readyToUse: true,
    };
    assert.deepEqual(snapshotFromWire(snapshotToWire(s)), s);
    const noTime = snapshotToWire({ ...s, creationTime: 0 });
    assert.equal(noTime.creation_time, null);
    assert.equal(snapshotFromWire(noTime).creationTime, 0);
  });

  void it("ListVolumes entries: published nodes and condition when present, none without a volume", () => {
    const volume = {
      volume_id: "v1",
      capacity_bytes: 10,
      volume_context: { a: "b" },
      content_source: { snapshot: { snapshot_id: "s1" } },
      accessible_topology: [],
    };
    assert.deepEqual(
      listVolumesEntryFromWire({
        volume,
        status: { published_node_ids: ["n1"], volume_condition: { abnormal: true, message: "degraded" } },
      }),
      {
        volume: {
          volumeId: "v1",
          capacityBytes: 10,
          volumeContext: { a: "b" },
          contentSource: { snapshotId: "s1" },
          accessibleTopology: [],
        },
        publishedNodeIds: ["n1"],
        condition: { abnormal: true, message: "degraded" },
      },
    );
    const bare = listVolumesEntryFromWire({ volume, status: null });
    assert.deepEqual([bare?.publishedNodeIds, bare?.condition], [[], null]);
    assert.equal(listVolumesEntryFromWire({ volume: null, status: null }), null);
  });

  void it("capacity ranges and optional int64 values", () => {
    assert.deepEqual(capacityRangeToWire({ requiredBytes: 1, limitBytes: 2 }), {
      required_bytes: 1,
      limit_bytes: 2,
    });
    assert.equal(capacityRangeToWire(null), null);
    assert.equal(int64ValueFromWire({ value: 7 }), 7);
    assert.equal(int64ValueFromWire(null), null);
  });
});
