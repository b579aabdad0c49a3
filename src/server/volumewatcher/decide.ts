/**
 * What the volumewatcher does with each claim, pure. A claim is reaped — driven through the release
 * walk by the server — when its release has started (any state past `taken`: finishing it is always
 * right), when its alloc is terminal or gone, or when its node is down or gone. A claim still
 * `taken` on a live node is never reaped by the server: the node step (NodeUnpublish/NodeUnstage)
 * is the node agent's, which unmounts and then reports `node-detached` itself. The watcher waits
 * for it, with no deadline (see VolumeWatcherOptions.nodeGraceMs for why).
 */
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import type { Node } from "../../structs/node.js";
import { liveClaims, type CSIVolume, type VolumeClaim } from "../../structs/volume.js";

export type ClaimAction =
  /** The claim is in use (live alloc on a live node): nothing to do. */
  | "keep"
  /** Release it through the walk (the node step is skipped when the node is down or gone). */
  | "release"
  /** Its alloc is done but the node is up: the node agent owns the node step; wait for it. */
  | "wait-node";

export function nodeIsGone(node: Pick<Node, "Status"> | undefined): boolean {
  return node === undefined || node.Status === "down";
}

export function claimAction(
  claim: VolumeClaim,
  alloc: Pick<Allocation, "ClientStatus" | "DesiredStatus"> | undefined,
  node: Pick<Node, "Status"> | undefined,
): ClaimAction {
  if (claim.State !== "taken") return "release";
  if (nodeIsGone(node)) return "release";
  if (alloc === undefined || isAllocTerminal(alloc)) return "wait-node";
  return "keep";
}

export interface VolumeWork {
  release: VolumeClaim[];
  waiting: VolumeClaim[];
}

/** Every claim of `vol` (live and past), sorted into what the watcher should do with it. */
export function volumeWork(
  vol: CSIVolume,
  allocOf: (id: string) => Pick<Allocation, "ClientStatus" | "DesiredStatus"> | undefined,
  nodeOf: (id: string) => Pick<Node, "Status"> | undefined,
): VolumeWork {
  const work: VolumeWork = { release: [], waiting: [] };
  for (const claim of [...liveClaims(vol), ...Object.values(vol.PastClaims)]) {
    const action = claimAction(claim, allocOf(claim.AllocationID), nodeOf(claim.NodeID));
    if (action === "release") work.release.push(claim);
    else if (action === "wait-node") work.waiting.push(claim);
  }
  return work;
}
