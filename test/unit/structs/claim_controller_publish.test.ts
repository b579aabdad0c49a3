/**
 * Issue 10, the risk of the departed-controller fix: a claim records the ControllerPublish that ran
 * for it (ControllerPublishPluginID), and its release goes through ControllerUnpublish whatever
 * the plugin's ControllerRequired says when it is released — a plugin whose only attach-capable
 * controller is down no longer looks controller-required, and dropping the step would leave the
 * attachment behind. A claim never controller-published frees as before. Pure functions only.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  applyClaim,
  findClaim,
  freeClaim,
  markControllerPublished,
  needsControllerUnpublish,
  nextReleaseStep,
  setClaimState,
  unpublishPluginOf,
  type ClaimRequest,
} from "../../../src/structs/claim.js";
import { redactVolume } from "../../../src/structs/redact.js";
import { newVolume, type AccessMode, type CSIVolume } from "../../../src/structs/volume.js";

function vol(mode: AccessMode, controllerRequired: boolean): CSIVolume {
  return newVolume({
    ID: "v",
    PluginID: "p",
    Schedulable: true,
    ControllerRequired: controllerRequired,
    RequestedCapabilities: [{ AccessMode: mode, AttachmentMode: "file-system" }],
  });
}

function req(alloc: string, node: string, access: AccessMode = "single-node-writer"): ClaimRequest {
  return {
    AllocationID: alloc,
    NodeID: node,
    ExternalNodeID: `ext-${node}`,
    Mode: "write",
    AccessMode: access,
    AttachmentMode: "file-system",
  };
}

/** What the claim endpoint does: the claim, then the record when the plugin attaches now. */
function claim(v: CSIVolume, r: ClaimRequest): CSIVolume {
  const claimed = applyClaim(v, r).volume;
  return v.ControllerRequired ? markControllerPublished(claimed, r.AllocationID, v.PluginID) : claimed;
}

/** The plugin as it looks once its only attach-capable controller's node is down. */
const controllerGone = (v: CSIVolume): CSIVolume => ({ ...v, ControllerRequired: false });

test("a controller-published claim needs ControllerUnpublish after its controller departed", () => {
  let v = claim(vol("single-node-writer", true), req("a1", "B"));
  assert.equal(findClaim(v, "a1")!.ControllerPublishPluginID, "p");
  v = setClaimState(controllerGone(v), "a1", "node-detached");
  const c = findClaim(v, "a1")!;
  assert.equal(c.ControllerPublishPluginID, "p", "the record survives the release walk's steps");
  assert.equal(needsControllerUnpublish(v, c), true);
  assert.equal(nextReleaseStep(v, c, false), "controller-detach");
  assert.equal(unpublishPluginOf(v, c), "p");
  // The node is down too: the node step is skipped, the controller step is not.
  const taken = claim(vol("single-node-writer", true), req("a2", "B"));
  assert.equal(nextReleaseStep(controllerGone(taken), findClaim(taken, "a2")!, true), "controller-detach");
  // Once unpublished, the claim frees.
  v = setClaimState(v, "a1", "controller-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "free");
});

test("a claim never controller-published frees without ControllerUnpublish, as before", () => {
  let v = claim(vol("single-node-writer", false), req("a1", "B"));
  assert.equal(findClaim(v, "a1")!.ControllerPublishPluginID, undefined);
  v = setClaimState(v, "a1", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "free");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, true), "free");
  // A claim without the record on a plugin that attaches now (stored before berth kept it, or
  // claimed while the controller was away) still unpublishes: a no-op for a volume not attached.
  const legacy = { ...v, ControllerRequired: true };
  assert.equal(nextReleaseStep(legacy, findClaim(legacy, "a1")!, false), "controller-detach");
});

test("the record is kept by an idempotent re-claim and by a re-claim in another mode", () => {
  let v = claim(vol("multi-node-multi-writer", true), req("a1", "B", "multi-node-multi-writer"));
  const again = applyClaim(controllerGone(v), req("a1", "B", "multi-node-multi-writer"));
  assert.equal(again.changed, false);
  assert.equal(findClaim(again.volume, "a1")!.ControllerPublishPluginID, "p");
  v = applyClaim(controllerGone(v), { ...req("a1", "B", "multi-node-multi-writer"), Mode: "read" }).volume;
  assert.equal(findClaim(v, "a1")!.ControllerPublishPluginID, "p");
  assert.equal(markControllerPublished(v, "a1", "p"), v, "already recorded: unchanged");
  assert.equal(markControllerPublished(v, "nope", "p"), v, "unknown alloc: unchanged");
});

test("the attachment is the node's: the last claim on the node unpublishes it", () => {
  // a1 was published while the controller was up; a2 joins on the same node after it departed.
  let v = claim(vol("multi-node-multi-writer", true), req("a1", "B", "multi-node-multi-writer"));
  v = claim(controllerGone(v), req("a2", "B", "multi-node-multi-writer"));
  assert.equal(findClaim(v, "a2")!.ControllerPublishPluginID, "p", "a2 shares a1's attachment");
  // a claim on another node does not share it.
  v = claim(v, req("a3", "C", "multi-node-multi-writer"));
  assert.equal(findClaim(v, "a3")!.ControllerPublishPluginID, undefined);

  v = setClaimState(v, "a1", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "free", "a2 still holds it on B");
  v = freeClaim(v, "a1");
  v = setClaimState(v, "a2", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a2")!, false), "controller-detach");
  v = setClaimState(v, "a3", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a3")!, false), "free");
});

test("a published claim freed while an unrecorded claim holds its node hands the record over", () => {
  // a1 claimed while the controller was away (no publish); a2 published after it came back.
  let v = claim(vol("multi-node-multi-writer", false), req("a1", "B", "multi-node-multi-writer"));
  v = claim({ ...v, ControllerRequired: true }, req("a2", "B", "multi-node-multi-writer"));
  assert.equal(findClaim(v, "a1")!.ControllerPublishPluginID, undefined);
  v = controllerGone(v);
  v = setClaimState(v, "a2", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a2")!, false), "free", "a1 still holds it on B");
  v = freeClaim(v, "a2");
  assert.equal(findClaim(v, "a1")!.ControllerPublishPluginID, "p", "a1 now owns the attachment");
  v = setClaimState(v, "a1", "node-detached");
  assert.equal(nextReleaseStep(v, findClaim(v, "a1")!, false), "controller-detach");
});

test("the record is berth's own bookkeeping: API answers leave it out", () => {
  const v = claim(
    setClaimState(
      claim(vol("multi-node-multi-writer", true), req("x", "B", "multi-node-multi-writer")),
      "x",
      "node-detached",
    ),
    req("y", "B", "multi-node-multi-writer"),
  );
  const shown = redactVolume(v);
  for (const c of [...Object.values(shown.WriteClaims), ...Object.values(shown.PastClaims)]) {
    assert.equal("ControllerPublishPluginID" in c, false);
  }
  assert.equal(Object.keys(shown.PastClaims).length, 1);
  assert.equal(findClaim(v, "x")!.ControllerPublishPluginID, "p", "the stored record keeps it");
});
