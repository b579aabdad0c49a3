/**
 * ClientCSI.NodeVolumeState: the server (the volumewatcher) asks a live node what it holds of one
 * alloc's use of one volume, before it releases a claim of a finished alloc without the node step.
 * Read-only on the node; the node agent's own state DB (stubs, pending releases, allocs) is the
 * authority, since it records a mount before the task can use it and a release before it starts.
 */

/** Names one alloc's use of a volume on the node that receives the call. */
export interface NodeVolumeStateRequest {
  Namespace: string;
  VolumeID: string;
  AllocID: string;
}

export interface NodeVolumeStateResponse {
  /** A persisted stub of the alloc names the volume: it is (or was being) staged/published here. */
  Mounted: boolean;
  /** A release of the alloc's use of the volume is pending (unmounted or not): the node finishes it. */
  ReleasePending: boolean;
  /**
   * The node runs the alloc, or has not recorded it finished: its prerun may still claim and mount
   * the volume (a claim's answer may yet arrive). False once the alloc's last status here is
   * terminal, or the node does not know the alloc at all.
   */
  AllocActive: boolean;
}

/** True when the node holds nothing of the volume for the alloc and will not: the claim is unused. */
export function nodeHoldsNothing(s: NodeVolumeStateResponse): boolean {
  return !s.Mounted && !s.ReleasePending && !s.AllocActive;
}
