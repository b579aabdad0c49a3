/** The volumewatcher's options and what it needs of the release walk (watcher.ts). */
import type { NodeVolumeStateRequest, NodeVolumeStateResponse } from "../../structs/rpc_volume_state.js";
import type { ClaimState } from "../../structs/volume.js";

/** The release walk, as the watcher needs it (ClaimEndpoint.releaseClaim). */
export interface ClaimReleaser {
  releaseClaim(
    namespace: string,
    req: { VolumeID: string; AllocationID: string; NodeID: string },
    reported: ClaimState,
    signal?: AbortSignal,
  ): Promise<boolean>;
  /**
   * ClientCSI.NodeVolumeState on `nodeId` (ClaimEndpoint.nodeVolumeState). Without it the watcher
   * never releases a claim of a live node by itself: it cannot ask the node.
   */
  nodeVolumeState?(
    nodeId: string,
    req: NodeVolumeStateRequest,
    signal?: AbortSignal,
  ): Promise<NodeVolumeStateResponse>;
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
   * waiting after that unless its node confirms it holds nothing of the volume for the alloc
   * (orphanGraceMs): the node step (unmount) can only be done on the node, and releasing the claim
   * without it would let another node attach a volume that is still mounted here — the double
   * attach the claim exists to prevent.
   */
  nodeGraceMs: number;
  /**
   * How long a claim of an ended alloc (terminal as its node reported, or gone) waits on its live
   * node before the watcher asks the node whether it holds anything of it (decide.ts
   * `release-unused`, orphans.ts).
   */
  orphanGraceMs: number;
  /** How often the node is asked again while it holds something or cannot be asked; an answer's life. */
  orphanRecheckMs: number;
  /** Deadline of one ClientCSI.NodeVolumeState. */
  orphanAskTimeoutMs: number;
  /**
   * The fence bound of single-writer claims of down nodes, for every claim (tests). Undefined
   * (default): each claim's own, decide.ts fenceHoldMsOf — its alloc's longest task stop time
   * plus `fenceMarginMs`, at least `minFenceHoldMs`.
   */
  fenceHoldMs: number | undefined;
  fenceMarginMs: number;
  minFenceHoldMs: number;
}

export const DEFAULT_VOLUME_WATCHER_OPTIONS: VolumeWatcherOptions = {
  scanIntervalMs: 100,
  minIntervalMs: 100,
  backoffBaseMs: 500,
  backoffMaxMs: 60_000,
  nodeGraceMs: 5 * 60_000,
  orphanGraceMs: 10_000,
  orphanRecheckMs: 30_000,
  orphanAskTimeoutMs: 15_000,
  fenceHoldMs: undefined,
  fenceMarginMs: 10_000,
  minFenceHoldMs: 10_000,
};
