/** The volumewatcher's options and what it needs of the release walk (watcher.ts). */
import type { ClaimState } from "../../structs/volume.js";

/** The release walk, as the watcher needs it (ClaimEndpoint.releaseClaim). */
export interface ClaimReleaser {
  releaseClaim(
    namespace: string,
    req: { VolumeID: string; AllocationID: string; NodeID: string },
    reported: ClaimState,
    signal?: AbortSignal,
  ): Promise<boolean>;
}

export interface VolumeWatcherOptions {
  /** Least time between two scans (coalesces bursts of writes). */
  scanIntervalMs: number;
  /** Least time between two release runs of one volume. */
  minIntervalMs: number;
  /** Backoff after a failed run: base·2^n, capped. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /**
   * How long a claim of a finished alloc may wait on a live node before the watcher warns. It keeps
   * waiting after that: the node step (unmount) can only be done on the node, and releasing the
   * claim without it would let another node attach a volume that is still mounted here — the
   * double attach the claim exists to prevent. Only a node that goes down loses its claims.
   */
  nodeGraceMs: number;
}

export const DEFAULT_VOLUME_WATCHER_OPTIONS: VolumeWatcherOptions = {
  scanIntervalMs: 100,
  minIntervalMs: 100,
  backoffBaseMs: 500,
  backoffMaxMs: 60_000,
  nodeGraceMs: 5 * 60_000,
};
