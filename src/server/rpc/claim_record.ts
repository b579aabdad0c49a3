/**
 * The transaction half of CSIVolume.Claim (claim.ts): checks that the calling node may claim the
 * volume for the alloc, and records the claim — with the ControllerPublish it is about to make,
 * when the volume needs one — before any call leaves the server.
 */
import { awaitingCreate, pendingCreateOf } from "./job_volume_pending.js";
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { applyClaim, findClaim, markControllerPublished } from "../../structs/claim.js";
import { BerthError, notFound } from "../../structs/errors.js";
import type { CSIInfo } from "../../structs/csi_terms.js";
import { ownEntry } from "../../structs/node.js";
import type { VolumeClaimRequest } from "../../structs/rpc.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { StateWriter } from "../state/store.js";
import { volumeView } from "../state/views.js";
import { checkAllocClaim } from "./node_scope.js";

/**
 * The claiming alloc, when the node acts for its own alloc of the volume's namespace that requests
 * the volume (node_scope.ts), checked before the volume is read so a refused node learns nothing
 * about it.
 */
function claimingAlloc(tx: StateWriter, req: VolumeClaimRequest, namespace: string): Allocation {
  const alloc = tx.getAlloc(req.AllocationID);
  if (!alloc) throw notFound("allocation", req.AllocationID);
  // A volume is claimed only by allocs of its own namespace (the scheduler looks volumes up in
  // the job's namespace; this holds for a claim that names another one itself).
  if (alloc.Namespace !== namespace) {
    throw new BerthError(
      "ERR_PERMISSION_DENIED",
      `allocation ${alloc.ID} in namespace ${JSON.stringify(alloc.Namespace)} cannot claim volume ${JSON.stringify(req.VolumeID)} of namespace ${JSON.stringify(namespace)}`,
    );
  }
  if (alloc.NodeID !== req.NodeID) {
    throw new BerthError(
      "ERR_PERMISSION_DENIED",
      `allocation ${alloc.ID} does not run on node ${req.NodeID}`,
    );
  }
  checkAllocClaim(alloc, namespace, req.VolumeID, req.Mode);
  return alloc;
}

/** The calling node's node plugin entry for the volume's plugin; the node must run one. */
function nodePluginOf(tx: StateWriter, req: VolumeClaimRequest, vol: CSIVolume): CSIInfo {
  const node = tx.getNode(req.NodeID);
  if (!node) throw notFound("node", req.NodeID);
  const nodePlugin = ownEntry(node.CSINodePlugins, vol.PluginID);
  if (!nodePlugin) {
    throw new BerthError(
      "ERR_CSI_VOLUME_UNSCHEDULABLE",
      `node ${req.NodeID} does not run a node plugin for ${JSON.stringify(vol.PluginID)}`,
    );
  }
  return nodePlugin;
}

/**
 * Checks and records the claim in `tx`; returns the volume as stored and the node's external ID
 * (the provider's, from NodeGetInfo) that ControllerPublish names.
 */
export function recordClaim(
  tx: StateWriter,
  req: VolumeClaimRequest,
  namespace: string,
): { vol: CSIVolume; externalNodeId: string } {
  const alloc = claimingAlloc(tx, req, namespace);
  const vol = volumeView(tx, namespace, req.VolumeID);
  if (!vol) {
    if (pendingCreateOf(tx, namespace, alloc.ID, req.VolumeID)) throw awaitingCreate(req.VolumeID);
    throw notFound("volume", req.VolumeID);
  }
  const nodePlugin = nodePluginOf(tx, req, vol);
  const held = findClaim(vol, alloc.ID);
  if (isAllocTerminal(alloc) && held?.State !== "taken") {
    throw new BerthError("ERR_CONFLICT", `allocation ${alloc.ID} is terminal and cannot claim volumes`);
  }
  const externalNodeId = nodePlugin.NodeInfo?.ID ?? "";
  // ControllerPublish names the node by the provider's ID; without one the controller would attach
  // to "" — refuse (retryably: the next fingerprint may carry it) instead.
  if (vol.ControllerRequired && externalNodeId === "") {
    throw new BerthError(
      "ERR_CSI_VOLUME_UNSCHEDULABLE",
      `node ${req.NodeID}'s node plugin for ${JSON.stringify(vol.PluginID)} has not reported its node ID (NodeGetInfo) yet`,
    );
  }
  const applied = applyClaim(vol, {
    AllocationID: alloc.ID,
    NodeID: req.NodeID,
    ExternalNodeID: externalNodeId,
    Mode: req.Mode,
    AccessMode: req.AccessMode,
    AttachmentMode: req.AttachmentMode,
  });
  // The ControllerPublish is recorded on the claim first, in this transaction: once the call is
  // made the volume may be attached, whatever becomes of its answer, and the release must then
  // unpublish it even if the plugin stops looking attach-capable.
  const volume = vol.ControllerRequired
    ? markControllerPublished(applied.volume, alloc.ID, vol.PluginID)
    : applied.volume;
  if (volume !== vol) tx.putVolume(volume);
  return { vol: volume, externalNodeId };
}
