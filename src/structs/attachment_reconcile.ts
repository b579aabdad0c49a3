/**
 * The attachment reconciler's last correction of a volume (issue 33 item 4; Nomad #12346, #15415,
 * #24130), kept on the volume as `CSIVolume.AttachmentReconcile` so it reaches every server's event
 * stream from the store (a `CSIVolumeAttachmentReconciled` event: events/convert.ts) and the API.
 * Nomad has no such record; the field names are berth's.
 *
 * - `unpublish-stale`: the provider listed the volume published to a node for which berth holds no
 *   claim at all (a freed claim whose ControllerUnpublish never happened): ControllerUnpublish.
 * - `republish-lost`: berth holds a live, controller-published claim of a running alloc on a node
 *   the provider does not list (the provider lost the attachment): ControllerPublish again.
 *
 * `Outcome` is `done`, `failed` (the call failed; the next pass tries again) or `dry-run` (the
 * reconciler only reports). Pure.
 */

export const ATTACHMENT_ACTIONS = ["unpublish-stale", "republish-lost"] as const;
export type AttachmentAction = (typeof ATTACHMENT_ACTIONS)[number];

export const ATTACHMENT_OUTCOMES = ["done", "failed", "dry-run"] as const;
export type AttachmentOutcome = (typeof ATTACHMENT_OUTCOMES)[number];

export interface VolumeAttachmentReconcile {
  Action: AttachmentAction;
  Outcome: AttachmentOutcome;
  /** The provider's node ID (NodeGetInfo) the correction was about. */
  ExternalNodeID: string;
  /** The berth node of the claim repaired ("" for a stale attachment berth has no claim for). */
  NodeID: string;
  /** The claim's alloc for a repair; "" for a stale attachment. */
  AllocationID: string;
  /** What was seen and done, or the call's error (never secrets: it names IDs and codes only). */
  Message: string;
  /** Unix nanoseconds of the correction. */
  Time: number;
}

/** Whether `next` reports something other than `prev` (a repeated dry-run report is not written again). */
export function reconcileRecordChanged(prev: unknown, next: VolumeAttachmentReconcile): boolean {
  const p = prev as Partial<VolumeAttachmentReconcile> | null | undefined;
  if (!p || typeof p !== "object") return true;
  if (next.Outcome !== "dry-run") return true;
  return !(
    p.Outcome === "dry-run" &&
    p.Action === next.Action &&
    p.ExternalNodeID === next.ExternalNodeID &&
    p.AllocationID === next.AllocationID
  );
}
