/**
 * The watcher's own decisions, recorded on the claim they concern (VolumeClaim.ReleaseStatus), so
 * `volume status` and the event stream show them (events/claim_events.ts names the events):
 * - `fence-hold`: a single-writer claim of a down node is held for the node's self-fence bound;
 *   NextAttempt is when this watcher frees it (its own clock's end, in wall time: an estimate);
 * - `orphan-release`: a claim its live node confirmed it holds nothing of, released without the
 *   node step (written just before the walk starts; the walk's first checkpoint clears it).
 * One small transaction each; a failed write is logged and costs only the visibility.
 */
import type { Logger } from "../../internal/log.js";
import type { VolumeClaim } from "../../structs/volume.js";
import type { StateStore } from "../state/store.js";
import { recordReleaseStatus } from "./release_status.js";

export interface ClaimRef {
  namespace: string;
  volumeId: string;
  claim: VolumeClaim;
}

export async function showFenceHold(
  store: StateStore,
  log: Logger,
  ref: ClaimRef,
  holdMs: number,
  remainingMs: number,
): Promise<void> {
  const { claim } = ref;
  log.info("holding a single-writer claim of a down node for its self-fence bound", {
    volume: ref.volumeId,
    namespace: ref.namespace,
    alloc: claim.AllocationID,
    node: claim.NodeID,
    hold_ms: holdMs,
    remaining_ms: Math.max(0, Math.round(remainingMs)),
  });
  await record(store, log, ref, {
    step: "fence-hold",
    lastError: `waiting for the node's self-fence bound: node ${claim.NodeID} is down; its agent stops this allocation's tasks by itself, so the claim is freed once the server has seen the node down for ${Math.round(holdMs / 1000)}s`,
    nextAttemptMs: Date.now() + Math.max(0, remainingMs),
  });
}

export async function showUnusedRelease(store: StateStore, log: Logger, ref: ClaimRef): Promise<void> {
  const { claim } = ref;
  log.info(
    "releasing a claim its node never used: the node holds nothing of the volume for the finished allocation",
    {
      volume: ref.volumeId,
      namespace: ref.namespace,
      alloc: claim.AllocationID,
      node: claim.NodeID,
    },
  );
  await record(store, log, ref, {
    step: "orphan-release",
    lastError: `node ${claim.NodeID} holds nothing of the volume for this finished allocation (no mount, no pending release): the server releases the claim without the node step`,
    nextAttemptMs: 0,
  });
}

async function record(
  store: StateStore,
  log: Logger,
  ref: ClaimRef,
  s: { step: "fence-hold" | "orphan-release"; lastError: string; nextAttemptMs: number },
): Promise<void> {
  try {
    await recordReleaseStatus(store, {
      namespace: ref.namespace,
      volumeId: ref.volumeId,
      allocId: ref.claim.AllocationID,
      step: s.step,
      lastError: s.lastError,
      attempts: 0,
      nextAttemptMs: s.nextAttemptMs,
    });
  } catch (err) {
    log.warn("could not record a claim's release status", { volume: ref.volumeId, error: err });
  }
}
