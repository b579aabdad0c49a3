/**
 * ControllerGetVolume of csi-hostpath (GET_VOLUME and VOLUME_CONDITION): the volume as CreateVolume
 * answers it, the nodes it is published to (--attach-required mode only, the only mode that knows
 * them), and its condition: abnormal when the volume's directory under the state dir is gone
 * (removed behind the plugin's back), as NodeGetVolumeStats says on the node side. An unknown
 * volume is NOT_FOUND (spec). A read: server.ts lets it run beside another call for the volume.
 */
import { status } from "@grpc/grpc-js";
import { rpcError, type HostpathContext } from "./context.js";
import { volumeAnswer } from "./controller.js";
import { isMissingDir } from "./volume_stats.js";

export async function controllerGetVolume(ctx: HostpathContext, req: { volume_id: string }): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  const vol = await ctx.volumes.get(req.volume_id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  const { volume } = volumeAnswer(ctx, vol) as { volume: object };
  const published = ctx.config.attachRequired
    ? (await ctx.attachments.list(vol.id)).map((a) => a.nodeId)
    : [];
  const dir = ctx.volumes.dirOf(vol.id);
  const missing = await isMissingDir(dir);
  return {
    volume,
    status: {
      published_node_ids: published,
      volume_condition: missing
        ? { abnormal: true, message: `volume directory ${dir} is missing` }
        : { abnormal: false, message: "volume directory is present" },
    },
  };
}
