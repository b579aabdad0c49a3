/**
 * CSIVolume.GetForNode, CSIVolume.Claim and CSIVolume.Unpublish, called by node agents. Claim and
 * Unpublish hold the volume's lock for their whole run, so claims, releases and controller calls of
 * one volume never interleave, while different volumes proceed in parallel.
 *
 * The claim is persisted BEFORE ControllerPublishVolume: the state store alone decides who holds a
 * volume, and a publish that fails or times out leaves a claim that a retry (or the release walk)
 * will find. The release walk persists its progress before each call it makes, so it resumes.
 */
import {
  findClaim,
  freeClaim,
  nextReleaseStep,
  setClaimState,
  unpublishPluginOf,
} from "../../structs/claim.js";
import { BerthError, asBerthError, notFound } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { isNodeOutOfContact } from "../../structs/node.js";
import { oneOf } from "../../structs/json_check.js";
import type { NodeVolumeStateRequest, NodeVolumeStateResponse } from "../../structs/rpc_volume_state.js";
import type {
  ClaimedVolume,
  VolumeClaimRequest,
  VolumeClaimResponse,
  VolumeGetForNodeRequest,
  VolumeGetForNodeResponse,
  VolumeReleaseProgressRequest,
  VolumeReleaseProgressResponse,
  VolumeUnpublishRequest,
  VolumeUnpublishResponse,
} from "../../structs/rpc.js";
import {
  ACCESS_MODES,
  ATTACHMENT_MODES,
  type CSIVolume,
  type ClaimState,
  type VolumeClaim,
} from "../../structs/volume.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import { volumeWake } from "../scheduler/blocked_wait.js";
import { publishForClaim } from "./claim_publish.js";
import { recordClaim } from "./claim_record.js";
import { pendingCreateOf } from "./job_volume_pending.js";
import type { StateWriter } from "../state/store.js";
import { volumeView } from "../state/views.js";
import { checkNodeAllocUsesVolume, checkNodeUsesVolume } from "./node_scope.js";
import { reportReleaseProgress } from "./release_progress.js";

const CLAIM_STATES: readonly ClaimState[] = [
  "taken",
  "node-detached",
  "controller-detached",
  "ready-to-free",
];

/**
 * The release of a claim waits because no usable controller of its plugin exists to run
 * ControllerUnpublishVolume (ERR_CSI_PLUGIN_UNAVAILABLE, retried). A distinct class so a caller
 * (the forced deregister) can tell this case from any other failure without reading the message.
 */
export class AwaitingControllerError extends BerthError {
  constructor(message: string) {
    super("ERR_CSI_PLUGIN_UNAVAILABLE", message);
    this.name = "AwaitingControllerError";
  }
}

export class ClaimEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  /**
   * The volume's plugin, nothing secret: the agent waits for that node plugin before it claims.
   * Only for a volume some allocation on the calling node requests (node_scope.ts).
   */
  getForNode(req: VolumeGetForNodeRequest): VolumeGetForNodeResponse {
    const namespace = checkId("Namespace", req.Namespace || "default");
    checkId("VolumeID", req.VolumeID);
    const nodeId = checkId("NodeID", req.NodeID);
    if (req.AllocationID === undefined) {
      checkNodeUsesVolume(this.deps.store, nodeId, namespace, req.VolumeID);
    } else {
      checkNodeAllocUsesVolume(
        this.deps.store,
        nodeId,
        checkId("AllocationID", req.AllocationID),
        namespace,
        req.VolumeID,
      );
    }
    const vol = volumeView(this.deps.store, namespace, req.VolumeID);
    if (!vol) {
      // A volume the alloc's job creates on first placement: its plugin, before it exists.
      const create =
        req.AllocationID === undefined
          ? undefined
          : pendingCreateOf(this.deps.store, namespace, req.AllocationID, req.VolumeID);
      if (create) return { ID: req.VolumeID, Namespace: namespace, PluginID: create.PluginID };
      throw notFound("volume", req.VolumeID);
    }
    return { ID: vol.ID, Namespace: vol.Namespace, PluginID: vol.PluginID };
  }

  async claim(req: VolumeClaimRequest, signal?: AbortSignal): Promise<VolumeClaimResponse> {
    const namespace = checkId("Namespace", req.Namespace || "default");
    checkId("VolumeID", req.VolumeID);
    checkId("AllocationID", req.AllocationID);
    oneOf("Mode", req.Mode, ["read", "write"] as const, "claim mode");
    oneOf("AccessMode", req.AccessMode, ACCESS_MODES, "access mode");
    oneOf("AttachmentMode", req.AttachmentMode, ATTACHMENT_MODES, "attachment mode");
    return this.deps.volumeLocks.run(
      volumeKey(namespace, req.VolumeID),
      async () => {
        const { vol, externalNodeId } = await this.deps.store.txn((tx) => recordClaim(tx, req, namespace));
        const publishContext = vol.ControllerRequired
          ? await this.controllerPublish(vol, externalNodeId, req, signal)
          : {};
        return { Volume: claimed(vol, req), PublishContext: publishContext, Index: this.deps.store.index() };
      },
      signal,
    );
  }

  /** ControllerPublishVolume of a claim already recorded: its PublishContext for the node's calls. */
  private controllerPublish(
    vol: CSIVolume,
    externalNodeId: string,
    req: VolumeClaimRequest,
    signal: AbortSignal | undefined,
  ): Promise<Record<string, string>> {
    return publishForClaim(
      this.deps,
      {
        PluginID: vol.PluginID,
        ExternalVolumeID: vol.ExternalID,
        ExternalNodeID: externalNodeId,
        Capability: { AccessMode: req.AccessMode, AttachmentMode: req.AttachmentMode },
        MountOptions: vol.MountOptions,
        ReadOnly: req.Mode === "read",
        Secrets: vol.Secrets ?? {},
        VolumeContext: vol.Context,
      },
      signal,
    );
  }

  /**
   * ClientCSI.NodeVolumeState on `nodeId` (forwarded to the server holding its connection): what
   * the node holds of one alloc's use of a volume. The volumewatcher asks it before it releases a
   * finished alloc's claim without the node step (volumewatcher/decide.ts `release-unused`).
   */
  nodeVolumeState(
    nodeId: string,
    req: NodeVolumeStateRequest,
    signal?: AbortSignal,
  ): Promise<NodeVolumeStateResponse> {
    return this.deps.conns.call(nodeId, "ClientCSI.NodeVolumeState", req, signal ? { signal } : {});
  }

  /** A node's failed or waiting release step, recorded on its claim (release_progress.ts). */
  reportReleaseProgress(req: VolumeReleaseProgressRequest): Promise<VolumeReleaseProgressResponse> {
    return reportReleaseProgress(this.deps.store, req);
  }

  /**
   * Walks the alloc's claim from the state the node reports (normally node-detached, after its
   * NodeUnpublish/NodeUnstage) to freed: ControllerUnpublish when the claim needs it (it was
   * controller-published, or the plugin requires it) and no other claim on that node holds the volume, then free. A missing volume or claim is already released.
   */
  async unpublish(req: VolumeUnpublishRequest, signal?: AbortSignal): Promise<VolumeUnpublishResponse> {
    const namespace = checkId("Namespace", req.Namespace || "default");
    checkId("VolumeID", req.VolumeID);
    checkId("AllocationID", req.AllocationID);
    const reported = oneOf("State", req.State, CLAIM_STATES, "claim state");
    await this.releaseClaim(namespace, req, reported, signal);
    return { Index: this.deps.store.index() };
  }

  /**
   * The one release walk, shared by CSIVolume.Unpublish and the volumewatcher: under the volume's
   * lock, records `reported` (the node's own progress; "taken" records nothing) and walks the claim
   * on as far as the server may take it. The node step is never done here: a claim still taken on a
   * live node is refused with ERR_CONFLICT; on a down or gone node it is skipped. Returns true when
   * this call freed the claim (blocked jobs are then re-evaluated); false when there was nothing to
   * free (no volume, no claim: already released).
   */
  async releaseClaim(
    namespace: string,
    req: Pick<VolumeUnpublishRequest, "VolumeID" | "AllocationID" | "NodeID">,
    reported: ClaimState,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const freed = await this.deps.volumeLocks.run(
      volumeKey(namespace, req.VolumeID),
      () => this.release(namespace, req, reported, signal),
      signal,
    );
    if (freed) {
      const pluginId = this.deps.store.getVolume(namespace, req.VolumeID)?.PluginID;
      void this.deps.scheduler.retryBlocked([volumeWake(namespace, req.VolumeID, pluginId)]);
    }
    return freed;
  }

  /** Returns true when the claim was freed by this call. */
  private async release(
    namespace: string,
    req: Pick<VolumeUnpublishRequest, "VolumeID" | "AllocationID" | "NodeID">,
    reported: ClaimState,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const { store } = this.deps;
    // The node's report and, when nothing external is left to do (no controller step), the free
    // share one transaction: one checkpoint fewer, and nothing between them to resume from.
    const first = await store.txn((tx) => {
      const cur = volumeView(tx, namespace, req.VolumeID);
      const claim = cur && findClaim(cur, req.AllocationID);
      if (!cur || !claim) return undefined;
      // A node releases only its own claims: the agent connection proved NodeID (agent.ts).
      if (req.NodeID && claim.NodeID !== req.NodeID) {
        throw new BerthError(
          "ERR_PERMISSION_DENIED",
          `the claim of allocation ${req.AllocationID} is not held by node ${req.NodeID}`,
        );
      }
      const next = reported === "taken" ? cur : setClaimState(cur, req.AllocationID, reported);
      const freed = freeIfNothingLeft(tx, next, req.AllocationID);
      if (freed !== cur) tx.putVolume(freed);
      return { vol: freed, freed: freed !== next };
    });
    if (!first) return false;
    if (first.freed) return true;
    const vol = first.vol;
    const claim = findClaim(vol, req.AllocationID)!;
    const node = store.getNode(claim.NodeID);
    const step = nextReleaseStep(vol, claim, !node || isNodeOutOfContact(node));
    if (step === "node-detach") {
      throw new BerthError(
        "ERR_CONFLICT",
        `volume ${JSON.stringify(req.VolumeID)} is still attached on node ${claim.NodeID}: unpublish with State "node-detached" once the node has unmounted it`,
      );
    }
    if (step === "controller-detach") await this.controllerUnpublish(vol, claim, signal);
    // Detached and freed in one checkpoint, as Nomad's Unpublish goes straight to ready-to-free:
    // a controller-detached claim is never needed to resume (no call is left to make for it). A
    // claim still held here without a controller step is one whose node went down meanwhile.
    return store.txn((tx) => {
      const cur = volumeView(tx, namespace, req.VolumeID);
      if (!cur || !findClaim(cur, req.AllocationID)) return false;
      const done =
        step === "controller-detach" ? setClaimState(cur, req.AllocationID, "controller-detached") : cur;
      tx.putVolume(freeClaim(done, req.AllocationID));
      return true;
    });
  }

  /**
   * ControllerUnpublishVolume for `claim`, through any live controller of the plugin that published
   * it (a replacement on another node is the normal case). With none that can take it (no live
   * controller, or none that supports attach/detach) the step is not skipped: this throws, the
   * claim stays where it is, and the caller (the node agent, the volumewatcher) retries; the error
   * says plainly what the release is waiting for.
   */
  private async controllerUnpublish(vol: CSIVolume, claim: VolumeClaim, signal?: AbortSignal): Promise<void> {
    const pluginId = unpublishPluginOf(vol, claim);
    const waiting = (why: string) =>
      // Retryable (503) either way: a controller that can detach may come (a rescheduled one).
      new AwaitingControllerError(
        `waiting for a controller of plugin ${JSON.stringify(pluginId)} to run ControllerUnpublishVolume for volume ${JSON.stringify(vol.ID)} on node ${claim.NodeID} (it was attached there; the release does not skip the detach): ${why}`,
      );
    try {
      await this.deps.controllers.call(
        pluginId,
        "ClientCSI.ControllerUnpublishVolume",
        {
          PluginID: pluginId,
          ExternalVolumeID: vol.ExternalID,
          ExternalNodeID: claim.ExternalNodeID,
          Secrets: vol.Secrets ?? {},
        },
        { requires: "SupportsAttachDetach", signal },
      );
    } catch (err) {
      const e = asBerthError(err);
      // The volume or node is already gone from the storage provider: detached is what we wanted.
      if (e.code === "ERR_CSI_NOT_FOUND") return;
      // A plugin whose every instance is gone (its record deleted) is waited for like a missing
      // controller, not taken for "nothing to release".
      if (e.code === "ERR_NOT_FOUND" && !this.deps.store.pluginSummary(pluginId))
        throw waiting("the plugin has no instance left");
      if (e.code === "ERR_CSI_PLUGIN_UNAVAILABLE" || e.code === "ERR_CSI_NOT_SUPPORTED")
        throw waiting(e.message);
      throw err;
    }
  }
}

/**
 * `vol` with the alloc's claim freed when the release walk's next step is the free itself (no node
 * or controller step left for it), else `vol` unchanged.
 */
function freeIfNothingLeft(tx: StateWriter, vol: CSIVolume, allocId: string): CSIVolume {
  const claim = findClaim(vol, allocId);
  if (!claim) return vol;
  const node = tx.getNode(claim.NodeID);
  return nextReleaseStep(vol, claim, !node || isNodeOutOfContact(node)) === "free"
    ? freeClaim(vol, allocId)
    : vol;
}

/** The node-internal view of a claimed volume: secrets included, never sent to the API. */
function claimed(vol: CSIVolume, req: VolumeClaimRequest): ClaimedVolume {
  return {
    ID: vol.ID,
    Namespace: vol.Namespace,
    ExternalID: vol.ExternalID,
    PluginID: vol.PluginID,
    AccessMode: req.AccessMode,
    AttachmentMode: req.AttachmentMode,
    MountOptions: vol.MountOptions,
    Secrets: vol.Secrets ?? {},
    Context: vol.Context,
    Capacity: vol.Capacity,
  };
}
