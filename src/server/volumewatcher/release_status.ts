/**
 * Recording a claim's release status (VolumeClaim.ReleaseStatus): which release step is failing or
 * waiting, its last error, its next attempt. Written by the volumewatcher for the steps the server
 * runs (ControllerUnpublishVolume, the rest of the walk) and by CSIVolume.ReleaseProgress for the
 * node's steps. One small transaction per failed attempt, so the retry backoff bounds the writes;
 * it takes no volume lock (a release holding it for a long controller call must not delay a
 * report), and reads the claim inside the transaction, so it never overwrites a newer claim state.
 * A status is cleared by the release walk itself when the step succeeds (setClaimState, freeClaim).
 */
import { findClaim } from "../../structs/claim.js";
import { NS_PER_MS } from "../../structs/job.js";
import {
  NODE_RELEASE_STEPS,
  withReleaseStatus,
  type ClaimReleaseStatus,
  type ReleaseStatusStep,
} from "../../structs/volume.js";
import type { StateStore } from "../state/store.js";

/** Longest LastError kept: a plugin's message can be long; the status is for people to read. */
export const MAX_RELEASE_ERROR_CHARS = 1024;

export interface ReleaseStatusUpdate {
  namespace: string;
  volumeId: string;
  allocId: string;
  step: ReleaseStatusStep;
  lastError: string;
  attempts: number;
  /** Unix ms of the next attempt; 0 when not known. */
  nextAttemptMs: number;
  /** When set, the claim must be held by this node (a node reports only its own claims). */
  nodeId?: string;
}

export type RecordOutcome = "recorded" | "no-claim" | "past-step" | "other-node";

/**
 * Records `u` on the claim. A node step (NodeUnpublish/NodeUnstage/plugin wait) is recorded only
 * while the claim is still taken: a report that arrives after the node already advanced it is
 * stale and dropped. `nowMs` is injectable for tests.
 */
export function recordReleaseStatus(
  store: StateStore,
  u: ReleaseStatusUpdate,
  nowMs = Date.now(),
): Promise<RecordOutcome> {
  return store.txn((tx) => {
    const vol = tx.getVolume(u.namespace, u.volumeId);
    const claim = vol && findClaim(vol, u.allocId);
    if (!vol || !claim) return "no-claim";
    if (u.nodeId !== undefined && claim.NodeID !== u.nodeId) return "other-node";
    if (NODE_RELEASE_STEPS.includes(u.step) && claim.State !== "taken") return "past-step";
    const status: ClaimReleaseStatus = {
      Step: u.step,
      LastError: truncate(u.lastError),
      Attempts: u.attempts,
      NextAttempt: u.nextAttemptMs > 0 ? Math.round(u.nextAttemptMs) * NS_PER_MS : 0,
      UpdateTime: nowMs * NS_PER_MS,
    };
    tx.putVolume(withReleaseStatus(vol, u.allocId, status));
    return "recorded";
  });
}

function truncate(s: string): string {
  return s.length <= MAX_RELEASE_ERROR_CHARS ? s : s.slice(0, MAX_RELEASE_ERROR_CHARS - 1) + "…";
}
