/**
 * Claim rules, pure. The server applies them inside a write transaction; the scheduler uses the
 * same checks for feasibility, so placement and claiming can never disagree.
 *
 * Rules by access mode (claims being released — PastClaims — still occupy the volume, because the
 * volume may still be attached to their node; a new claim waits for the release instead of racing
 * a ControllerPublish against an unfinished ControllerUnpublish):
 * - reader-only modes refuse write claims (not retryable);
 * - single-node-* (all four): every claim, live or releasing, must be on the claiming node
 *   (ERR_CSI_IN_USE);
 * - single-node-writer, single-node-single-writer, multi-node-single-writer: at most one writer
 *   (ERR_CSI_MAX_CLAIMS); read claims beside it are allowed (CSI's single-node-single-writer: "published
 *   once as read/write at a single workload" limits the read/write publish; Nomad's host volumes
 *   read it the same way);
 * - single-node-multi-writer: any number of writers and readers, on that one node;
 * - multi-node-multi-writer, multi-node-reader-only: no limit.
 * A volume whose claims are live uses one access/attachment mode; a claim in another mode waits.
 */
import { BerthError, validationError } from "./errors.js";
import { isSingleWriterAccessMode } from "./single_writer.js";
import {
  isSingleNodeAccessMode,
  isWriteAccessMode,
  type AccessMode,
  type AttachmentMode,
  type CSIVolume,
  type ClaimMode,
  type ClaimState,
  type VolumeClaim,
  liveClaims,
} from "./volume.js";

export interface ClaimRequest {
  AllocationID: string;
  NodeID: string;
  ExternalNodeID: string;
  Mode: ClaimMode;
  AccessMode: AccessMode;
  AttachmentMode: AttachmentMode;
}

function allClaimsExcept(vol: CSIVolume, allocId: string): VolumeClaim[] {
  return [...liveClaims(vol), ...Object.values(vol.PastClaims)].filter((c) => c.AllocationID !== allocId);
}

/** Why `req` cannot be claimed now, or null when it can. Does not check idempotent re-claims. */
export function checkClaim(vol: CSIVolume, req: ClaimRequest): BerthError | null {
  if (!vol.Schedulable) {
    return new BerthError(
      "ERR_CSI_VOLUME_UNSCHEDULABLE",
      `volume ${JSON.stringify(vol.ID)} is not schedulable: plugin ${JSON.stringify(vol.PluginID)} has no healthy node plugin${vol.ControllerRequired ? " or controller" : ""}`,
    );
  }
  if (
    vol.RequestedCapabilities.length > 0 &&
    !vol.RequestedCapabilities.some(
      (c) => c.AccessMode === req.AccessMode && c.AttachmentMode === req.AttachmentMode,
    )
  ) {
    const offered = vol.RequestedCapabilities.map((c) => `${c.AccessMode}/${c.AttachmentMode}`).join(", ");
    return validationError(
      "AccessMode",
      `volume ${JSON.stringify(vol.ID)} has no capability ${req.AccessMode}/${req.AttachmentMode} (it offers ${offered})`,
    );
  }
  if (req.Mode === "write" && !isWriteAccessMode(req.AccessMode)) {
    return validationError(
      "AccessMode",
      `access mode ${req.AccessMode} is read-only; a write claim needs a writer mode`,
    );
  }
  const others = allClaimsExcept(vol, req.AllocationID);
  const live = others.filter((c) => c.State === "taken");
  if (live.length > 0 && vol.AccessMode !== "" && vol.AccessMode !== req.AccessMode) {
    return new BerthError(
      "ERR_CSI_IN_USE",
      `volume ${JSON.stringify(vol.ID)} is in use with access mode ${vol.AccessMode}, not ${req.AccessMode}`,
    );
  }
  if (isSingleNodeAccessMode(req.AccessMode)) {
    const elsewhere = others.find((c) => c.NodeID !== req.NodeID);
    if (elsewhere) {
      return new BerthError(
        "ERR_CSI_IN_USE",
        `volume ${JSON.stringify(vol.ID)} (${req.AccessMode}) is in use on node ${elsewhere.NodeID}`,
      );
    }
  }
  if (
    req.Mode === "write" &&
    isSingleWriterAccessMode(req.AccessMode) &&
    others.some((c) => c.Mode === "write")
  ) {
    return new BerthError(
      "ERR_CSI_MAX_CLAIMS",
      `volume ${JSON.stringify(vol.ID)} has exhausted its available writer claims`,
    );
  }
  return null;
}

/**
 * Applies a claim and returns the new volume, or throws the refusal. Idempotent: the same alloc
 * claiming again in the same mode returns the volume unchanged (`changed` false).
 */
export function applyClaim(vol: CSIVolume, req: ClaimRequest): { volume: CSIVolume; changed: boolean } {
  const held = vol.ReadClaims[req.AllocationID] ?? vol.WriteClaims[req.AllocationID];
  if (
    held &&
    held.Mode === req.Mode &&
    held.AccessMode === req.AccessMode &&
    held.AttachmentMode === req.AttachmentMode
  ) {
    return { volume: vol, changed: false };
  }
  const refusal = checkClaim(vol, req);
  if (refusal) throw refusal;
  const published = attachmentRecord(vol, req.NodeID, req.AllocationID);
  const claim: VolumeClaim = {
    ...req,
    State: "taken",
    ControllerPublishPluginID: published,
  };
  const ReadClaims = { ...vol.ReadClaims };
  const WriteClaims = { ...vol.WriteClaims };
  const PastClaims = { ...vol.PastClaims };
  delete ReadClaims[req.AllocationID];
  delete WriteClaims[req.AllocationID];
  delete PastClaims[req.AllocationID];
  if (req.Mode === "write") WriteClaims[req.AllocationID] = claim;
  else ReadClaims[req.AllocationID] = claim;
  return {
    volume: {
      ...vol,
      ReadClaims,
      WriteClaims,
      PastClaims,
      AccessMode: req.AccessMode,
      AttachmentMode: req.AttachmentMode,
    },
    changed: true,
  };
}

/**
 * The plugin through which the volume is controller-published to `nodeId`, as the claims there
 * record it: the alloc's own earlier claim (a re-claim in another mode keeps it), or another claim
 * on that node that still holds the volume (before controller-detached): a new claim on a node
 * where the volume is already attached shares that attachment, and must unpublish it if it is the
 * last to go.
 */
function attachmentRecord(vol: CSIVolume, nodeId: string, allocId: string): string | undefined {
  const own = findClaim(vol, allocId);
  if (own?.ControllerPublishPluginID !== undefined && own.NodeID === nodeId)
    return own.ControllerPublishPluginID;
  return holdersOnNode(vol, nodeId, allocId).find((c) => c.ControllerPublishPluginID !== undefined)
    ?.ControllerPublishPluginID;
}

/** Claims other than `allocId`'s on `nodeId` that still hold the volume there (not yet controller-detached). */
function holdersOnNode(vol: CSIVolume, nodeId: string, allocId: string): VolumeClaim[] {
  return allClaimsExcept(vol, allocId).filter(
    (c) => c.NodeID === nodeId && CLAIM_STATE_ORDER[c.State] < CLAIM_STATE_ORDER["controller-detached"],
  );
}

/**
 * Records on `allocId`'s claim that ControllerPublishVolume is (about to be) asked of `pluginId`'s
 * controller for it. Called before the call, in the claim's transaction, so the release knows to
 * unpublish even if the call's answer is lost. Unchanged (same object) when already recorded.
 */
export function markControllerPublished(vol: CSIVolume, allocId: string, pluginId: string): CSIVolume {
  for (const key of ["ReadClaims", "WriteClaims"] as const) {
    const claim = vol[key][allocId];
    if (!claim) continue;
    if (claim.ControllerPublishPluginID === pluginId) return vol;
    return { ...vol, [key]: { ...vol[key], [allocId]: { ...claim, ControllerPublishPluginID: pluginId } } };
  }
  return vol;
}

/**
 * Whether a claim's release must go through ControllerUnpublishVolume (before the
 * other-claims-on-the-node rule): when ControllerPublish ran for it — whatever the plugin looks
 * like now: the controller that attached may be on a node that is down, which no longer makes the
 * plugin controller-required, and dropping the step would leave the attachment behind with nothing
 * in berth remembering it — or when the plugin requires the controller now (claims stored before
 * berth kept the record; ControllerUnpublish of a volume that is not attached is a no-op in CSI).
 */
export function needsControllerUnpublish(vol: CSIVolume, claim: VolumeClaim): boolean {
  return claim.ControllerPublishPluginID !== undefined || vol.ControllerRequired;
}

/** The plugin whose controller must run the claim's ControllerUnpublishVolume. */
export function unpublishPluginOf(vol: CSIVolume, claim: VolumeClaim): string {
  return claim.ControllerPublishPluginID ?? vol.PluginID;
}

/** Finds an alloc's claim wherever it is in its life. */
export function findClaim(vol: CSIVolume, allocId: string): VolumeClaim | undefined {
  return vol.ReadClaims[allocId] ?? vol.WriteClaims[allocId] ?? vol.PastClaims[allocId];
}

/**
 * Moves an alloc's claim into the release walk at `state` (or advances it there when it is already
 * releasing). A state never moves backwards; an unknown alloc leaves the volume unchanged.
 */
export function setClaimState(vol: CSIVolume, allocId: string, state: ClaimState): CSIVolume {
  const claim = findClaim(vol, allocId);
  if (!claim) return vol;
  if (state !== "taken" && CLAIM_STATE_ORDER[state] <= CLAIM_STATE_ORDER[claim.State]) return vol;
  const ReadClaims = { ...vol.ReadClaims };
  const WriteClaims = { ...vol.WriteClaims };
  const PastClaims = { ...vol.PastClaims };
  delete ReadClaims[allocId];
  delete WriteClaims[allocId];
  // The step it was waiting in is done: its release status goes with it (withReleaseStatus).
  const { ReleaseStatus: _done, ...rest } = claim;
  PastClaims[allocId] = { ...rest, State: state };
  return resetModeIfIdle({ ...vol, ReadClaims, WriteClaims, PastClaims });
}

/**
 * Drops a fully released claim. A claim that recorded a ControllerPublish and is freed without its
 * ControllerUnpublish (other claims on its node still hold the volume) hands the record to those
 * claims: the attachment stays with the node, and whichever of them goes last unpublishes it.
 */
export function freeClaim(vol: CSIVolume, allocId: string): CSIVolume {
  const claim = findClaim(vol, allocId);
  if (!claim) return vol;
  const ReadClaims = { ...vol.ReadClaims };
  const WriteClaims = { ...vol.WriteClaims };
  const PastClaims = { ...vol.PastClaims };
  delete ReadClaims[allocId];
  delete WriteClaims[allocId];
  delete PastClaims[allocId];
  const pluginId = claim.ControllerPublishPluginID;
  if (pluginId !== undefined && CLAIM_STATE_ORDER[claim.State] < CLAIM_STATE_ORDER["controller-detached"]) {
    for (const other of holdersOnNode(vol, claim.NodeID, allocId)) {
      if (other.ControllerPublishPluginID !== undefined) continue;
      const map = ReadClaims[other.AllocationID]
        ? ReadClaims
        : WriteClaims[other.AllocationID]
          ? WriteClaims
          : PastClaims;
      map[other.AllocationID] = { ...other, ControllerPublishPluginID: pluginId };
    }
  }
  return resetModeIfIdle({ ...vol, ReadClaims, WriteClaims, PastClaims });
}

function resetModeIfIdle(vol: CSIVolume): CSIVolume {
  return liveClaims(vol).length === 0 ? { ...vol, AccessMode: "", AttachmentMode: "" } : vol;
}

export const CLAIM_STATE_ORDER: Record<ClaimState, number> = {
  taken: 0,
  "node-detached": 1,
  "controller-detached": 2,
  "ready-to-free": 3,
};

export type ReleaseStep = "node-detach" | "controller-detach" | "free";

/**
 * The next step of a claim's release. The node step belongs to the node agent (it unmounts
 * locally) unless the node is gone, in which case the server skips it — the one permitted break of
 * the CSI ordering. ControllerUnpublish runs when the claim needs it (needsControllerUnpublish:
 * it was controller-published, or the plugin requires the controller) and no other claim on the
 * same node still holds the volume; it is never skipped for want of a live controller (the caller
 * waits and retries instead).
 */
export function nextReleaseStep(vol: CSIVolume, claim: VolumeClaim, nodeGone: boolean): ReleaseStep {
  if (claim.State === "taken" && !nodeGone) return "node-detach";
  if (claim.State === "taken" || claim.State === "node-detached") {
    return needsControllerUnpublish(vol, claim) && !otherClaimOnNode(vol, claim)
      ? "controller-detach"
      : "free";
  }
  return "free";
}

export function otherClaimOnNode(vol: CSIVolume, claim: VolumeClaim): boolean {
  return holdersOnNode(vol, claim.NodeID, claim.AllocationID).length > 0;
}
