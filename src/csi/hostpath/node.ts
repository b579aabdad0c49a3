/**
 * Node service of csi-hostpath: NodeStage bind-mounts the volume directory onto the staging path,
 * NodePublish bind-mounts the staging path onto the target (read-only via a bind remount). Every
 * call is idempotent: a repeat with the same arguments finds the mount already there and succeeds;
 * unpublish/unstage of something not mounted (or a missing path) succeed.
 */
import fs from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import type { WireNodePublishRequest, WireNodeStageRequest } from "../wire.js";
import { checkCapabilities } from "./controller.js";
import { requirePublished } from "./controller_publish.js";
import { rpcError, type HostpathContext } from "./context.js";
import { bindMount, isReadOnly, mountAt, unmountAll } from "./mounter.js";
import { mountsUnder } from "../../internal/mountinfo.js";
import { applyVolumeMountGroup } from "./modify_features.js";
import { nodePublishBlock, nodeStageBlock, nodeUnpublishBlock, nodeUnstageBlock } from "./block.js";
import { statTarget } from "./target_stat.js";

function requireFields(fields: Record<string, string>): void {
  for (const [name, value] of Object.entries(fields)) {
    if (!value) throw rpcError(status.INVALID_ARGUMENT, `${name} is required`);
  }
}

async function requireVolume(ctx: HostpathContext, id: string): Promise<string> {
  if (!(await ctx.volumes.get(id))) throw rpcError(status.NOT_FOUND, `volume ${id} not found`);
  return ctx.volumes.dirOf(id);
}

/** Whether the mount at a path comes from this volume (a bind mount's root is its source dir). */
function fromVolume(root: string, id: string): boolean {
  return root.endsWith("/volumes/" + id);
}

export async function nodeStageVolume(ctx: HostpathContext, req: WireNodeStageRequest): Promise<object> {
  requireFields({ volume_id: req.volume_id, staging_target_path: req.staging_target_path });
  if (!req.volume_capability) throw rpcError(status.INVALID_ARGUMENT, "volume_capability is required");
  checkCapabilities(ctx.config, [req.volume_capability]);
  const source = await requireVolume(ctx, req.volume_id);
  if (ctx.config.attachRequired) await requirePublished(ctx, req.volume_id, req.publish_context ?? {});
  if (req.volume_capability.block) return nodeStageBlock(ctx, req);
  const existing = await mountAt(req.staging_target_path);
  if (existing) {
    if (fromVolume(existing.root, req.volume_id)) return {};
    throw rpcError(status.ALREADY_EXISTS, `${req.staging_target_path} is mounted from another source`);
  }
  await fs.mkdir(req.staging_target_path, { recursive: true });
  await bindMount(source, req.staging_target_path, false);
  ctx.log.info("staged", { volume_id: req.volume_id, path: req.staging_target_path });
  return {};
}

export async function nodePublishVolume(ctx: HostpathContext, req: WireNodePublishRequest): Promise<object> {
  requireFields({
    volume_id: req.volume_id,
    staging_target_path: req.staging_target_path,
    target_path: req.target_path,
  });
  if (!req.volume_capability) throw rpcError(status.INVALID_ARGUMENT, "volume_capability is required");
  checkCapabilities(ctx.config, [req.volume_capability]);
  await requireVolume(ctx, req.volume_id);
  if (req.volume_capability.block) return nodePublishBlock(ctx, req);
  const staged = await mountAt(req.staging_target_path);
  if (!staged || !fromVolume(staged.root, req.volume_id)) {
    throw rpcError(
      status.FAILED_PRECONDITION,
      `volume ${req.volume_id} is not staged at ${req.staging_target_path}`,
    );
  }
  await applyVolumeMountGroup(ctx, req.staging_target_path, req.volume_capability);
  const existing = await mountAt(req.target_path);
  if (existing) {
    if (fromVolume(existing.root, req.volume_id) && isReadOnly(existing) === req.readonly) return {};
    throw rpcError(status.ALREADY_EXISTS, `${req.target_path} is already published with other options`);
  }
  await fs.mkdir(req.target_path, { recursive: true });
  await bindMount(req.staging_target_path, req.target_path, req.readonly);
  ctx.log.info("published", { volume_id: req.volume_id, path: req.target_path, readonly: req.readonly });
  return {};
}

/** Unmounts `p` if mounted and removes the (now empty) directory; missing paths are success. */
async function unmountAndRemove(p: string): Promise<void> {
  await unmountAll(p);
  const left = await mountsUnder(p);
  if (left.length > 0) throw rpcError(status.FAILED_PRECONDITION, `${p} still has mounts below it`);
  try {
    await fs.rmdir(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    if (code === "ENOTDIR") {
      await fs.rm(p, { force: true });
      return;
    }
    throw err;
  }
}

export async function nodeUnpublishVolume(
  ctx: HostpathContext,
  req: { volume_id: string; target_path: string },
): Promise<object> {
  requireFields({ volume_id: req.volume_id, target_path: req.target_path });
  await statTarget(req.target_path);
  await nodeUnpublishBlock(ctx, req.target_path);
  await unmountAndRemove(req.target_path);
  ctx.log.info("unpublished", { volume_id: req.volume_id, path: req.target_path });
  return {};
}

export async function nodeUnstageVolume(
  ctx: HostpathContext,
  req: { volume_id: string; staging_target_path: string },
): Promise<object> {
  requireFields({ volume_id: req.volume_id, staging_target_path: req.staging_target_path });
  await nodeUnstageBlock(ctx, req);
  await unmountAndRemove(req.staging_target_path);
  ctx.log.info("unstaged", { volume_id: req.volume_id, path: req.staging_target_path });
  return {};
}
