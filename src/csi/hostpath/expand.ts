/**
 * Expansion in csi-hostpath. A directory has no size, so ControllerExpandVolume raises the recorded
 * capacity (never lowers it) and always asks for node expansion, so a CO's NodeExpandVolume path is
 * exercised; NodeExpandVolume checks that the volume is published or staged at the given path and
 * answers the recorded capacity (nothing to grow), the call itself being what the call log shows.
 */
import { status } from "@grpc/grpc-js";
import type { WireCapacityRange } from "../wire.js";
import { mountAt } from "../../internal/mountinfo.js";
import { rpcError, type HostpathContext } from "./context.js";
import { reportedCapacity } from "./controller.js";

export async function controllerExpandVolume(
  ctx: HostpathContext,
  req: { volume_id: string; capacity_range: WireCapacityRange | null },
): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  if (!req.capacity_range) throw rpcError(status.INVALID_ARGUMENT, "capacity_range is required");
  const required = Number(req.capacity_range.required_bytes);
  const limit = Number(req.capacity_range.limit_bytes);
  if (required < 0 || limit < 0) throw rpcError(status.INVALID_ARGUMENT, "capacity must not be negative");
  if (required === 0 && limit === 0)
    throw rpcError(status.INVALID_ARGUMENT, "capacity_range needs required_bytes or limit_bytes");
  if (required && limit && required > limit) {
    throw rpcError(status.OUT_OF_RANGE, `required_bytes ${required} exceeds limit_bytes ${limit}`);
  }
  const vol = await ctx.volumes.get(req.volume_id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  const wanted = required || limit;
  if (limit && vol.capacityBytes > limit) {
    throw rpcError(
      status.OUT_OF_RANGE,
      `volume ${vol.id} has ${vol.capacityBytes} bytes, above limit_bytes ${limit}: volumes do not shrink`,
    );
  }
  if (wanted > vol.capacityBytes) {
    await ctx.volumes.create({ ...vol, capacityBytes: wanted });
    ctx.log.info("volume expanded", { volume_id: vol.id, capacity_bytes: wanted });
  }
  return {
    capacity_bytes: reportedCapacity(ctx, Math.max(wanted, vol.capacityBytes)),
    node_expansion_required: true,
  };
}

export async function nodeExpandVolume(
  ctx: HostpathContext,
  req: { volume_id: string; volume_path: string; staging_target_path: string },
): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  if (!req.volume_path) throw rpcError(status.INVALID_ARGUMENT, "volume_path is required");
  const vol = await ctx.volumes.get(req.volume_id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  const mounted = await mountAt(req.volume_path);
  if (!mounted || !mounted.root.endsWith("/volumes/" + vol.id)) {
    throw rpcError(status.NOT_FOUND, `volume ${vol.id} is not published at ${req.volume_path}`);
  }
  ctx.log.info("node expansion: nothing to grow for a directory", { volume_id: vol.id });
  return { capacity_bytes: reportedCapacity(ctx, vol.capacityBytes) };
}
