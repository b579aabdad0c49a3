/**
 * CSIVolume.ReleaseProgress: a node agent reports that a release step of one of its claims failed
 * and will be retried, or waits (for its node plugin). The agent connection has already checked
 * that NodeID is the calling node (agent.ts); here the claim must be that node's too.
 */
import { BerthError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { oneOf, optNumber, optString } from "../../structs/json_check.js";
import type { VolumeReleaseProgressRequest, VolumeReleaseProgressResponse } from "../../structs/rpc.js";
import { NODE_RELEASE_STEPS, type ReleaseStatusStep } from "../../structs/volume.js";
import { NS_PER_MS } from "../../structs/job.js";
import type { StateStore } from "../state/store.js";
import { recordReleaseStatus } from "../volumewatcher/release_status.js";

/** The steps a node runs and may report; the controller steps are the server's own. */
const NODE_REPORTABLE: readonly ReleaseStatusStep[] = [...NODE_RELEASE_STEPS, "server-unpublish"];

export async function reportReleaseProgress(
  store: StateStore,
  req: VolumeReleaseProgressRequest,
): Promise<VolumeReleaseProgressResponse> {
  const namespace = checkId("Namespace", req.Namespace || "default");
  checkId("VolumeID", req.VolumeID);
  checkId("AllocationID", req.AllocationID);
  const step = oneOf("Step", req.Step, NODE_REPORTABLE, "node release step");
  const outcome = await recordReleaseStatus(store, {
    namespace,
    volumeId: req.VolumeID,
    allocId: req.AllocationID,
    nodeId: req.NodeID,
    step,
    lastError: optString("LastError", req.LastError, ""),
    attempts: optNumber("Attempts", req.Attempts, 0, { integer: true, min: 0 }),
    nextAttemptMs: optNumber("NextAttempt", req.NextAttempt, 0, { min: 0 }) / NS_PER_MS,
  });
  if (outcome === "other-node") {
    throw new BerthError(
      "ERR_PERMISSION_DENIED",
      `the claim of allocation ${req.AllocationID} on volume ${JSON.stringify(req.VolumeID)} is not held by node ${req.NodeID}`,
    );
  }
  return { Recorded: outcome === "recorded", Index: store.index() };
}
