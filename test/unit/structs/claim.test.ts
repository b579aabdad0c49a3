import { test } from "node:test";
import assert from "node:assert/strict";
import {
  applyClaim,
  checkClaim,
  findClaim,
  freeClaim,
  nextReleaseStep,
  setClaimState,
  type ClaimRequest,
} from "../../../src/structs/claim.js";
import {
  ACCESS_MODES,
  isWriteAccessMode,
  newVolume,
  type AccessMode,
  type CSIVolume,
} from "../../../src/structs/volume.js";

function vol(mode: AccessMode): CSIVolume {
  return newVolume({
    ID: "v",
    PluginID: "p",
    Schedulable: true,
    RequestedCapabilities: [{ AccessMode: mode, AttachmentMode: "file-system" }],
  });
}
function req(alloc: string, node: string, mode: "read" | "write", access: AccessMode): ClaimRequest {
  return {
    AllocationID: alloc,
    NodeID: node,
    ExternalNodeID: `ext-${node}`,
    Mode: mode,
    AccessMode: access,
    AttachmentMode: "file-system",
  };
}

for (const mode of ACCESS_MODES) {
  test(`${mode}: first read and write claims`, () => {
    const v = vol(mode);
    assert.equal(checkClaim(v, req("a1", "n1", "read", mode)), null);
    const w = checkClaim(v, req("a1", "n1", "write", mode));
    if (isWriteAccessMode(mode)) assert.equal(w, null);
    else assert.equal(w?.code, "ERR_VALIDATION");
  });

  test(`${mode}: a second reader on another node`, () => {
    const v = applyClaim(vol(mode), req("a1", "n1", "read", mode)).volume;
    const other = checkClaim(v, req("a2", "n2", "read", mode));
    if (mode.startsWith("single-node")) assert.equal(other?.code, "ERR_CSI_IN_USE");
    else assert.equal(other, null);
    assert.equal(checkClaim(v, req("a3", "n1", "read", mode)), null, "same node always fits");
  });

  if (isWriteAccessMode(mode)) {
    test(`${mode}: writer limits`, () => {
      const v = applyClaim(vol(mode), req("a1", "n1", "write", mode)).volume;
      const sameNode = checkClaim(v, req("a2", "n1", "write", mode));
      const otherNode = checkClaim(v, req("a3", "n2", "write", mode));
      if (mode === "multi-node-multi-writer") {
        assert.equal(sameNode, null);
        assert.equal(otherNode, null);
      } else if (mode === "single-node-multi-writer") {
        assert.equal(sameNode, null);
        assert.equal(otherNode?.code, "ERR_CSI_IN_USE");
      } else {
        assert.equal(sameNode?.code, "ERR_CSI_MAX_CLAIMS");
        assert.equal(
          otherNode?.code,
          mode.startsWith("single-node-") ? "ERR_CSI_IN_USE" : "ERR_CSI_MAX_CLAIMS",
        );
      }
    });
  }
}

test("a releasing claim still occupies the volume until freed", () => {
  let v = applyClaim(vol("single-node-writer"), req("a1", "n1", "write", "single-node-writer")).volume;
  v = setClaimState(v, "a1", "node-detached");
  assert.equal(Object.keys(v.WriteClaims).length, 0);
  assert.equal(v.AccessMode, "");
  assert.equal(checkClaim(v, req("a2", "n2", "write", "single-node-writer"))?.code, "ERR_CSI_IN_USE");
  v = freeClaim(v, "a1");
  assert.equal(checkClaim(v, req("a2", "n2", "write", "single-node-writer")), null);
});

test("re-claiming in the same mode is idempotent", () => {
  const first = applyClaim(vol("single-node-writer"), req("a1", "n1", "write", "single-node-writer"));
  assert.equal(first.changed, true);
  const again = applyClaim(first.volume, req("a1", "n1", "write", "single-node-writer"));
  assert.equal(again.changed, false);
  assert.equal(again.volume, first.volume);
});

test("a claim whose capability the volume does not offer is refused", () => {
  const v = vol("single-node-writer");
  const err = checkClaim(v, { ...req("a1", "n1", "read", "multi-node-reader-only") });
  assert.equal(err?.code, "ERR_VALIDATION");
  assert.match(err?.message ?? "", /no capability multi-node-reader-only\/file-system/);
  const block = checkClaim(v, {
    ...req("a1", "n1", "write", "single-node-writer"),
    AttachmentMode: "block-device",
  });
  assert.equal(block?.code, "ERR_VALIDATION");
});

test("an unschedulable volume refuses claims", () => {
  assert.equal(
    checkClaim(
      { ...vol("single-node-writer"), Schedulable: false },
      req("a1", "n1", "read", "single-node-writer"),
    )?.code,
    "ERR_CSI_VOLUME_UNSCHEDULABLE",
  );
});

test("release walk: node-detached → controller-detach when required → free", () => {
  let v = {
    ...applyClaim(vol("single-node-writer"), req("a1", "n1", "write", "single-node-writer")).volume,
    ControllerRequired: true,
  };
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "node-detach");
  v = setClaimState(v, "a1", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "controller-detach");
  v = setClaimState(v, "a1", "controller-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "free");
  assert.equal(setClaimState(v, "a1", "node-detached"), v, "states never move backwards");
});

test("release walk skips ControllerUnpublish while another claim on the node remains", () => {
  let v = { ...vol("multi-node-multi-writer"), ControllerRequired: true };
  v = applyClaim(v, req("a1", "n1", "write", "multi-node-multi-writer")).volume;
  v = applyClaim(v, req("a2", "n1", "write", "multi-node-multi-writer")).volume;
  v = setClaimState(v, "a1", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "free");
});
