/**
 * The attachment reconciler's decision for one volume, pure (issue 33 item 4): given berth's record
 * of the volume (its claims) and the nodes the storage provider lists it published to
 * (ListVolumes' `published_node_ids`, all pages), the corrections to make, in order. The
 * reconciler (attachment_reconciler.ts) decides again on the record it reads under the volume's
 * lock, right before it acts, so no claim, release or create is in flight while the decision holds.
 *
 * Rules:
 * - A node the provider lists with NO claim of the volume naming it — in any state, read, write or
 *   past (a claim being released is the release walk's: its ControllerUnpublish is coming) — is a
 *   stale attachment: `unpublish-stale` (ControllerUnpublish for that node).
 * - A claim berth holds as attached — `taken`, ControllerPublish recorded on it, with the provider's
 *   node ID — of an alloc that RUNS on a node in contact, whose node the provider does not list, is
 *   a lost attachment: `republish-lost` (ControllerPublish again for that node), one per node, a
 *   writer's capability first. A pending alloc is left alone: its node is still claiming, and its
 *   own claim call publishes (and must, to hand the publish context to NodeStage).
 * - Stale unpublishes come first: a single-node volume the provider still lists elsewhere could not
 *   be published back.
 * - A volume that does not attach (not ControllerRequired and no claim recorded a publish) gets
 *   nothing: the provider's listing of it means nothing to berth.
 */
import type { CSIVolume, VolumeClaim } from "../../structs/volume.js";

export type AttachmentStep =
  | { kind: "unpublish-stale"; externalNodeId: string }
  | { kind: "republish-lost"; externalNodeId: string; claim: VolumeClaim };

/** What the reconciler knows of a claim's alloc and node beyond the volume record. */
export interface ClaimFacts {
  /** The alloc exists, runs (ClientStatus running) and is meant to (DesiredStatus run). */
  allocRunning: boolean;
  /** The claim's node exists and is in contact (not down, not disconnected). */
  nodeInContact: boolean;
}

function allClaims(vol: CSIVolume): VolumeClaim[] {
  return [
    ...Object.values(vol.WriteClaims),
    ...Object.values(vol.ReadClaims),
    ...Object.values(vol.PastClaims),
  ];
}

/** Whether berth treats the volume as one that goes through ControllerPublish. */
function attaches(vol: CSIVolume): boolean {
  return vol.ControllerRequired || allClaims(vol).some((c) => c.ControllerPublishPluginID !== undefined);
}

export function decideAttachments(
  vol: CSIVolume,
  publishedExternalNodeIds: readonly string[],
  facts: (claim: VolumeClaim) => ClaimFacts,
): AttachmentStep[] {
  if (!attaches(vol)) return [];
  const published = new Set(publishedExternalNodeIds.filter((n) => n !== ""));
  const claimed = new Set(allClaims(vol).map((c) => c.ExternalNodeID));
  const steps: AttachmentStep[] = [];
  for (const node of [...published].sort()) {
    if (!claimed.has(node)) steps.push({ kind: "unpublish-stale", externalNodeId: node });
  }
  const repaired = new Set<string>();
  // Write claims first: a node holding a writer and a reader is published back read-write.
  for (const claim of [...Object.values(vol.WriteClaims), ...Object.values(vol.ReadClaims)]) {
    const node = claim.ExternalNodeID;
    if (node === "" || published.has(node) || repaired.has(node)) continue;
    if (claim.State !== "taken" || claim.ControllerPublishPluginID === undefined) continue;
    const f = facts(claim);
    if (!f.allocRunning || !f.nodeInContact) continue;
    repaired.add(node);
    steps.push({ kind: "republish-lost", externalNodeId: node, claim });
  }
  return steps;
}
