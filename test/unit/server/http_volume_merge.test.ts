/** Re-registering a volume follows Nomad's CSIVolume.Merge: its identity fields are immutable. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { newVolume } from "../../../src/structs/volume.js";
import { immutableChanges } from "../../../src/server/rpc/volume_register.js";

const prev = newVolume({
  ID: "v1",
  Name: "data",
  PluginID: "p1",
  ExternalID: "ext-1",
  CloneID: "",
  SnapshotID: "snap-1",
  Parameters: { tier: "fast" },
});

test("unchanged or unset identity fields are accepted", () => {
  assert.deepEqual(immutableChanges(prev, { ...prev }), []);
  // Unset in the update (Go's zero values; Name defaults to the ID): nothing to compare.
  assert.deepEqual(
    immutableChanges(prev, { ...prev, Name: "v1", ExternalID: "", SnapshotID: "", Parameters: {} }),
    [],
  );
});

test("each changed identity field is refused with Nomad's text, in Merge's order", () => {
  assert.deepEqual(immutableChanges(prev, { ...prev, Name: "other" }), ["volume name cannot be updated"]);
  assert.deepEqual(
    immutableChanges(prev, {
      ...prev,
      Name: "other",
      ExternalID: "ext-2",
      PluginID: "p2",
      CloneID: "c",
      SnapshotID: "snap-2",
      Parameters: { tier: "slow" },
    }),
    [
      "volume name cannot be updated",
      "volume external ID cannot be updated",
      "volume plugin ID cannot be updated",
      "volume clone ID cannot be updated",
      "volume snapshot ID cannot be updated",
      "volume parameters cannot be updated",
    ],
  );
});
