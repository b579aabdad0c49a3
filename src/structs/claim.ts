/**
 * Claim rules, pure. The server applies them inside a write transaction; the scheduler uses the
 * same checks for feasibility, so placement and claiming can never disagree.
 *
 * Rules by access mode (claims being released — PastClaims — still occupy the volume, because the
 * volume may still be attached to their node; a new claim waits for the release instead of racing
 * a ControllerPublish against an unfinished ControllerUnpublish):
 * - reader-only modes refuse write claims (not retryable);
 * - single-node-*: every claim, live or releasing, must be on the claiming node (ERR_CSI_IN_USE);
 * - single-node-writer, multi-node-single-writer: at most one writer (ERR_CSI_MAX_CLAIMS);
 * - multi-node-multi-writer, multi-node-reader-only: no limit.
 * A volume whose claims are live uses one access/attachment mode; a claim in another mode waits.
 */
import { BerthError, validationError } from "./errors.js";
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
    (req.AccessMode === "single-node-writer" || req.AccessMode === "multi-node-single-writer") &&
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
  const claim: VolumeClaim = { ...req, State: "taken" };
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

/** Drops a fully released claim. */
export function freeClaim(vol: CSIVolume, allocId: string): CSIVolume {
  if (!findClaim(vol, allocId)) return vol;
  const ReadClaims = { ...vol.ReadClaims };
  const WriteClaims = { ...vol.WriteClaims };
  const PastClaims = { ...vol.PastClaims };
  delete ReadClaims[allocId];
  delete WriteClaims[allocId];
  delete PastClaims[allocId];
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
 * the CSI ordering. ControllerUnpublish runs only when the plugin needs it and no other claim on
 * the same node still holds the volume.
 */
export function nextReleaseStep(vol: CSIVolume, claim: VolumeClaim, nodeGone: boolean): ReleaseStep {
  if (claim.State === "taken" && !nodeGone) return "node-detach";
  if (claim.State === "taken" || claim.State === "node-detached") {
    return vol.ControllerRequired && !otherClaimOnNode(vol, claim) ? "controller-detach" : "free";
  }
  return "free";
}

export function otherClaimOnNode(vol: CSIVolume, claim: VolumeClaim): boolean {
  return allClaimsExcept(vol, claim.AllocationID).some(
    (c) => c.NodeID === claim.NodeID && CLAIM_STATE_ORDER[c.State] < CLAIM_STATE_ORDER["controller-detached"],
  );
}
