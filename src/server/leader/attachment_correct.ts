/**
 * The attachment reconciler's work on one volume, run under the volume's lock (the lock claims,
 * the release walk and the volumewatcher hold for their whole run: leader/volume_locks.ts), so no
 * claim, release or controller call of the volume is in flight meanwhile.
 *
 * - The record is read again under the lock; one written since the provider's listing began
 *   (ModifyIndex above the store index read before the list) is left for the next pass — the list
 *   may predate a claim or a release — and one deleted or re-registered is left alone.
 * - The decision (attachment_decide.ts) is made again on that record; each step is one controller
 *   call (ControllerUnpublish for a stale attachment, ControllerPublish with the claim's capability
 *   for a lost one), made only when not in dry-run, and recorded on the volume as its
 *   `AttachmentReconcile` (a CSIVolumeAttachmentReconciled event) whatever its outcome.
 * - A republish hands no publish context to the node. Decided so because the node has already
 *   staged and published the volume for the running alloc and CSI passes publish_context only to
 *   NodeStage/NodePublish: a mounted volume does not read it again, and any later NodeStage on that
 *   node follows a new claim, whose answer carries a fresh context from its own ControllerPublish.
 *   The record's message says how many keys the new context has (the server keeps no earlier
 *   context to compare it with).
 */
import { isAllocTerminal } from "../../structs/alloc.js";
import type {
  AttachmentAction,
  AttachmentOutcome,
  VolumeAttachmentReconcile,
} from "../../structs/attachment_reconcile.js";
import { reconcileRecordChanged } from "../../structs/attachment_reconcile.js";
import { asBerthError } from "../../structs/errors.js";
import { NS_PER_MS } from "../../structs/job.js";
import { conditionMessage } from "../../structs/volume_condition.js";
import { isNodeOutOfContact } from "../../structs/node.js";
import type { CSIVolume, VolumeClaim } from "../../structs/volume.js";
import type { ControllerClient } from "../clientconn/controller.js";
import type { StateStore } from "../state/store.js";
import { volumeView } from "../state/views.js";
import { decideAttachments, type AttachmentStep, type ClaimFacts } from "./attachment_decide.js";

export interface CorrectionContext {
  store: StateStore;
  controllers: Pick<ControllerClient, "call">;
  dryRun: boolean;
  /** Deadline of one call and how long its retryable failures are retried (both short: the lock is held). */
  callTimeoutMs: number;
  callRetryMs: number;
  nowMs: () => number;
}

/** One correction as made (or reported). */
export interface Correction {
  action: AttachmentAction;
  outcome: AttachmentOutcome;
  externalNodeId: string;
  code: string;
  message: string;
}

export type VolumeOutcome = { kind: "changed" } | { kind: "corrected"; corrections: Correction[] };

/** The facts the decision needs of a claim's alloc and node, from the store. */
export function claimFacts(store: Pick<StateStore, "getAlloc" | "getNode">): (c: VolumeClaim) => ClaimFacts {
  return (c) => {
    const alloc = store.getAlloc(c.AllocationID);
    const node = store.getNode(c.NodeID);
    return {
      allocRunning: !!alloc && !isAllocTerminal(alloc) && alloc.ClientStatus === "running",
      nodeInContact: !!node && !isNodeOutOfContact(node),
    };
  };
}

/** Decides again and corrects `namespace/id`; call it holding the volume's lock. */
export async function correctVolume(
  ctx: CorrectionContext,
  ref: { namespace: string; id: string; externalId: string },
  published: readonly string[],
  listedAtIndex: number,
  signal: AbortSignal,
): Promise<VolumeOutcome> {
  const vol = volumeView(ctx.store, ref.namespace, ref.id);
  if (!vol || vol.ExternalID !== ref.externalId || vol.ModifyIndex > listedAtIndex)
    return { kind: "changed" };
  const corrections: Correction[] = [];
  for (const step of decideAttachments(vol, published, claimFacts(ctx.store))) {
    if (signal.aborted) break;
    const made = ctx.dryRun ? dryRun(step) : await perform(ctx, vol, step, signal);
    corrections.push(made);
    await record(ctx, vol, step, made);
    // The term is over (or its session stale): nothing more is sent (leader/gate.ts).
    if (made.code === "ERR_FENCED") break;
  }
  return { kind: "corrected", corrections };
}

function dryRun(step: AttachmentStep): Correction {
  return {
    action: step.kind,
    outcome: "dry-run",
    externalNodeId: step.externalNodeId,
    code: "",
    message:
      step.kind === "unpublish-stale"
        ? `the provider lists the volume published to node ${step.externalNodeId}, where berth holds no claim of it (dry run: not unpublished)`
        : `berth holds allocation ${step.claim.AllocationID}'s claim attached on node ${step.externalNodeId}, which the provider does not list (dry run: not published again)`,
  };
}

async function perform(
  ctx: CorrectionContext,
  vol: CSIVolume,
  step: AttachmentStep,
  signal: AbortSignal,
): Promise<Correction> {
  const opts = {
    requires: "SupportsAttachDetach" as const,
    signal,
    timeoutMs: ctx.callTimeoutMs,
    retryDeadlineMs: ctx.callRetryMs,
  };
  const base = { action: step.kind, externalNodeId: step.externalNodeId };
  try {
    if (step.kind === "unpublish-stale") {
      await ctx.controllers.call(
        vol.PluginID,
        "ClientCSI.ControllerUnpublishVolume",
        {
          PluginID: vol.PluginID,
          ExternalVolumeID: vol.ExternalID,
          ExternalNodeID: step.externalNodeId,
          Secrets: vol.Secrets ?? {},
        },
        opts,
      );
      return {
        ...base,
        outcome: "done",
        code: "",
        message: `unpublished from node ${step.externalNodeId}: the provider listed it there, and berth holds no claim of the volume on that node`,
      };
    }
    const c = step.claim;
    const res = await ctx.controllers.call(
      c.ControllerPublishPluginID ?? vol.PluginID,
      "ClientCSI.ControllerPublishVolume",
      {
        PluginID: c.ControllerPublishPluginID ?? vol.PluginID,
        ExternalVolumeID: vol.ExternalID,
        ExternalNodeID: step.externalNodeId,
        Capability: { AccessMode: c.AccessMode, AttachmentMode: c.AttachmentMode },
        MountOptions: vol.MountOptions,
        ReadOnly: c.Mode === "read",
        Secrets: vol.Secrets ?? {},
        VolumeContext: vol.Context,
      },
      opts,
    );
    const keys = Object.keys(res.PublishContext ?? {}).length;
    return {
      ...base,
      outcome: "done",
      code: "",
      message: `published again to node ${step.externalNodeId} for allocation ${c.AllocationID}: the provider had lost the attachment (publish context of ${keys} key(s) not sent to the node: its mounts stay as staged)`,
    };
  } catch (err) {
    const e = asBerthError(err);
    // The storage already lacks the volume or the node: nothing attached there to undo.
    if (step.kind === "unpublish-stale" && e.code === "ERR_CSI_NOT_FOUND") {
      return {
        ...base,
        outcome: "done",
        code: "",
        message: `node ${step.externalNodeId} detached already (NOT_FOUND)`,
      };
    }
    return {
      ...base,
      outcome: "failed",
      code: e.code,
      // The plugin's words with the volume's secret values redacted, as the condition poll keeps them.
      message: conditionMessage(
        `${step.kind} on node ${step.externalNodeId} failed (${e.code}): ${e.message}`,
        vol.Secrets,
      ),
    };
  }
}

/** The correction on the volume (re-read: one deleted or re-registered meanwhile is left alone). */
async function record(
  ctx: CorrectionContext,
  vol: CSIVolume,
  step: AttachmentStep,
  made: Correction,
): Promise<void> {
  const rec: VolumeAttachmentReconcile = {
    Action: made.action,
    Outcome: made.outcome,
    ExternalNodeID: made.externalNodeId,
    NodeID: step.kind === "republish-lost" ? step.claim.NodeID : "",
    AllocationID: step.kind === "republish-lost" ? step.claim.AllocationID : "",
    Message: made.message,
    Time: ctx.nowMs() * NS_PER_MS,
  };
  await ctx.store.txn((tx) => {
    const cur = tx.getVolume(vol.Namespace, vol.ID);
    if (!cur || cur.ExternalID !== vol.ExternalID || cur.PluginID !== vol.PluginID) return;
    if (!reconcileRecordChanged(cur.AttachmentReconcile, rec)) return;
    tx.putVolume({ ...cur, AttachmentReconcile: rec });
  });
}
