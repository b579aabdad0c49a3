/**
 * ControllerPublish/UnpublishVolume of csi-hostpath (--attach-required): "attaching" a directory
 * means recording the attachment (attachments.ts). A volume published with a single-node access
 * mode goes to one node at a time: publishing it to a second node while attached elsewhere is
 * FAILED_PRECONDITION (CSI spec: "volume published to another node"). Both calls are idempotent.
 */
import { status } from "@grpc/grpc-js";
import type { WireVolumeCapability } from "../wire.js";
import { isSingleNodeMode } from "./attachments.js";
import { checkCapabilities } from "./controller.js";
import { rpcError, type HostpathContext } from "./context.js";

/** The publish_context NodeStage checks: which node the controller attached the volume to. */
export const ATTACHED_TO_KEY = "attached_to";

export interface WireControllerPublishRequest {
  volume_id: string;
  node_id: string;
  volume_capability: WireVolumeCapability | null;
  readonly: boolean;
}

export async function controllerPublishVolume(
  ctx: HostpathContext,
  req: WireControllerPublishRequest,
): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  if (!req.node_id) throw rpcError(status.INVALID_ARGUMENT, "node_id is required");
  if (!req.volume_capability) throw rpcError(status.INVALID_ARGUMENT, "volume_capability is required");
  checkCapabilities(ctx.config, [req.volume_capability]);
  if (!(await ctx.volumes.get(req.volume_id)))
    throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  const accessMode = req.volume_capability.access_mode?.mode ?? "UNKNOWN";
  const attached = await ctx.attachments.list(req.volume_id);
  const elsewhere = attached.find(
    (a) => a.nodeId !== req.node_id && (isSingleNodeMode(accessMode) || isSingleNodeMode(a.accessMode)),
  );
  if (elsewhere) {
    throw rpcError(
      status.FAILED_PRECONDITION,
      `volume ${req.volume_id} is published to node ${elsewhere.nodeId} (${elsewhere.accessMode})`,
    );
  }
  const mine = attached.find((a) => a.nodeId === req.node_id);
  if (mine && (mine.accessMode !== accessMode || mine.readonly !== req.readonly)) {
    throw rpcError(
      status.ALREADY_EXISTS,
      `volume ${req.volume_id} is published to node ${req.node_id} with another capability`,
    );
  }
  if (!mine) {
    await ctx.attachments.put({
      volumeId: req.volume_id,
      nodeId: req.node_id,
      accessMode,
      readonly: req.readonly,
    });
    ctx.log.info("published to node", { volume_id: req.volume_id, node_id: req.node_id });
  }
  return { publish_context: { [ATTACHED_TO_KEY]: req.node_id } };
}

/** Unknown volumes and attachments are success; an empty node_id detaches from every node (spec). */
export async function controllerUnpublishVolume(
  ctx: HostpathContext,
  req: { volume_id: string; node_id: string },
): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  await ctx.attachments.remove(req.volume_id, req.node_id);
  ctx.log.info("unpublished from node", { volume_id: req.volume_id, node_id: req.node_id });
  return {};
}

/**
 * NodeStage's check in --attach-required mode: the publish_context must name this node and the
 * attachment must exist, so a CO that skips ControllerPublish or drops its context is caught.
 */
export async function requirePublished(
  ctx: HostpathContext,
  volumeId: string,
  publishContext: Record<string, string>,
): Promise<void> {
  const to = publishContext[ATTACHED_TO_KEY];
  if (to !== ctx.config.nodeId) {
    throw rpcError(
      status.FAILED_PRECONDITION,
      `volume ${volumeId} has no publish_context for node ${ctx.config.nodeId}: ControllerPublishVolume must run first and its publish_context be passed`,
    );
  }
  if (!(await ctx.attachments.get(volumeId, ctx.config.nodeId))) {
    throw rpcError(status.FAILED_PRECONDITION, `volume ${volumeId} is not published to node ${to}`);
  }
}
