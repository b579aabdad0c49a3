/**
 * The volumewatcher's decisions as events (issue 28): a claim whose release status turns
 * `fence-hold` or `orphan-release` makes a CSIVolumeClaimFenceHold / CSIVolumeClaimOrphanRelease
 * event, once; other claim changes stay CSIVolumeClaim.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { eventsOf } from "../../../src/server/events/convert.js";
import { setClaimState } from "../../../src/structs/claim.js";
import { withReleaseStatus, type CSIVolume, type ReleaseStatusStep } from "../../../src/structs/volume.js";
import { makeVolume } from "../../builders/volume.js";

const typeOf = (after: CSIVolume, before: CSIVolume) =>
  eventsOf({
    index: 3,
    changes: [{ table: "volumes", namespace: "default", id: after.ID, op: "put", record: after, before }],
  })[0]!.Type;

const status = (Step: ReleaseStatusStep) => ({
  Step,
  LastError: "why",
  Attempts: 0,
  NextAttempt: 0,
  UpdateTime: 1,
});

test("claim decisions: fence hold and orphan release are typed events, made when the step turns", () => {
  const vol = makeVolume("v1", {
    WriteClaims: {
      a1: {
        AllocationID: "a1",
        NodeID: "n1",
        ExternalNodeID: "x",
        Mode: "write",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
        State: "taken",
      },
    },
  });
  const held = withReleaseStatus(vol, "a1", status("fence-hold"));
  assert.equal(typeOf(held, vol), "CSIVolumeClaimFenceHold");
  // Written again with the same step (a new leader's own end time): no second decision event.
  assert.equal(
    typeOf(withReleaseStatus(held, "a1", { ...status("fence-hold"), UpdateTime: 2 }), held),
    "CSIVolumeClaim",
  );
  const orphan = withReleaseStatus(vol, "a1", status("orphan-release"));
  assert.equal(typeOf(orphan, vol), "CSIVolumeClaimOrphanRelease");
  assert.equal(typeOf(orphan, held), "CSIVolumeClaimOrphanRelease");
  // The walk's checkpoint clears it: an ordinary claim event.
  assert.equal(typeOf(setClaimState(orphan, "a1", "node-detached"), orphan), "CSIVolumeClaim");
  // Other steps stay ordinary claim events.
  assert.equal(typeOf(withReleaseStatus(vol, "a1", status("controller-unpublish")), vol), "CSIVolumeClaim");
});
