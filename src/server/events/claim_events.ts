/**
 * berth's own CSIVolume event types for the volumewatcher's decisions, which it records on the
 * claim (volumewatcher/visible_waits.ts) so they reach every server's stream from the store:
 * - `CSIVolumeClaimFenceHold`: a claim's ReleaseStatus turned `fence-hold` — a single-writer claim
 *   of a down node is held for the node's self-fence bound (NextAttempt: when it is freed);
 * - `CSIVolumeClaimOrphanRelease`: a claim's ReleaseStatus turned `orphan-release` — its live node
 *   holds nothing of the volume for the finished alloc, and the claim is released without the
 *   node step (a claim whose answer never reached its node). The walk's own CSIVolumeClaim events
 *   follow (ControllerUnpublish, then the claim freed).
 * Pure; reads only the claims' release steps.
 */
import type { CSIVolume, ReleaseStatusStep, VolumeClaim } from "../../structs/volume.js";

const TYPE_OF_STEP: ReadonlyMap<ReleaseStatusStep, string> = new Map<ReleaseStatusStep, string>([
  ["fence-hold", "CSIVolumeClaimFenceHold"],
  ["orphan-release", "CSIVolumeClaimOrphanRelease"],
]);

/** The event type when a claim's release step turned to one of the watcher's decisions, else undefined. */
export function claimDecisionType(before: CSIVolume | undefined, after: CSIVolume): string | undefined {
  for (const claim of claimsOf(after)) {
    const step = claim.ReleaseStatus?.Step;
    const type = step && TYPE_OF_STEP.get(step);
    if (!type) continue;
    const was = before && findIn(before, claim.AllocationID)?.ReleaseStatus?.Step;
    if (was !== step) return type;
  }
  return undefined;
}

function claimsOf(v: CSIVolume): VolumeClaim[] {
  return [...Object.values(v.ReadClaims), ...Object.values(v.WriteClaims), ...Object.values(v.PastClaims)];
}

function findIn(v: CSIVolume, allocId: string): VolumeClaim | undefined {
  return v.ReadClaims[allocId] ?? v.WriteClaims[allocId] ?? v.PastClaims[allocId];
}
