/**
 * MODIFY_VOLUME in csi-hostpath (--modify-volume): ControllerModifyVolume records the mutable
 * parameters in the volume's metadata (`mutableParameters`), and so does CreateVolume's
 * mutable_parameters. Without the flag both are refused: a CO must not send them to a plugin that
 * does not advertise MODIFY_VOLUME.
 */
import { status } from "@grpc/grpc-js";
import { rpcError, type HostpathContext } from "./context.js";
import type { HostpathVolume } from "./volumes.js";

/** ControllerModifyVolume: records the mutable parameters (--modify-volume). */
export async function controllerModifyVolume(
  ctx: HostpathContext,
  req: { volume_id: string; mutable_parameters: Record<string, string> },
): Promise<object> {
  if (!ctx.config.modifyVolume)
    throw rpcError(status.UNIMPLEMENTED, "ControllerModifyVolume needs --modify-volume");
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  const vol = await ctx.volumes.get(req.volume_id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  await ctx.volumes.create({ ...vol, mutableParameters: { ...req.mutable_parameters } });
  ctx.log.info("volume modified", { volume_id: vol.id, keys: Object.keys(req.mutable_parameters) });
  return {};
}

/** CreateVolume's mutable_parameters onto the new volume's metadata (refused without the flag). */
export function withMutableParameters(
  ctx: HostpathContext,
  vol: HostpathVolume,
  params: Record<string, string> | undefined,
): HostpathVolume {
  if (!params || Object.keys(params).length === 0) return vol;
  if (!ctx.config.modifyVolume)
    throw rpcError(status.INVALID_ARGUMENT, "mutable_parameters need MODIFY_VOLUME (--modify-volume)");
  return { ...vol, mutableParameters: { ...params } };
}
