/** Controller service of csi-hostpath: volumes are directories (volumes.ts). */
import { status } from "@grpc/grpc-js";
import { readMounts } from "../../internal/mountinfo.js";
import type { WireCreateVolumeRequest, WireVolumeCapability } from "../wire.js";
import { contentSourceToWire } from "../convert.js";
import { volumeIdFor, type HostpathVolume, type VolumeStore } from "./volumes.js";
import { rpcError, type HostpathContext } from "./context.js";
import { resolveContentSource, sameSource } from "./content_source.js";
import { SnapshotStore } from "./snapshots.js";
import { accessibleTopology, requestedTopology } from "./topology.js";
import { withMutableParameters } from "./modify.js";
import { checkRoom } from "./capacity.js";
import { capabilityProblem, requireCapabilities } from "./access_modes.js";
import { deleteBlockImage } from "./block.js";
import type { HostpathConfig } from "./flags.js";

export const DEFAULT_CAPACITY_BYTES = 1 << 30;

/** INVALID_ARGUMENT unless csi-hostpath serves every capability (access_modes.ts). */
export function checkCapabilities(config: HostpathConfig, caps: WireVolumeCapability[]): void {
  requireCapabilities(config, caps);
}

/** The capacity a volume answers with: 0 ("unknown" in CSI) under --report-capacity-zero. */
export function reportedCapacity(ctx: HostpathContext, bytes: number): number {
  return ctx.config.reportCapacityZero ? 0 : bytes;
}

export function volumeAnswer(ctx: HostpathContext, v: HostpathVolume): object {
  return {
    volume: {
      volume_id: v.id,
      capacity_bytes: reportedCapacity(ctx, v.capacityBytes),
      volume_context: {},
      content_source: contentSourceToWire(v.contentSource ?? null),
      accessible_topology: accessibleTopology(v.accessibleTopology, ctx.config.topology),
    },
  };
}

export async function createVolume(ctx: HostpathContext, req: WireCreateVolumeRequest): Promise<object> {
  if (!req.name) throw rpcError(status.INVALID_ARGUMENT, "name is required");
  if (req.volume_capabilities.length === 0)
    throw rpcError(status.INVALID_ARGUMENT, "volume_capabilities is required");
  checkCapabilities(ctx.config, req.volume_capabilities);
  const source = await resolveContentSource(
    ctx,
    new SnapshotStore(ctx.config.stateDir),
    req.volume_content_source,
  );
  const required = Number(req.capacity_range?.required_bytes ?? 0);
  const limit = Number(req.capacity_range?.limit_bytes ?? 0);
  if (required < 0 || limit < 0) throw rpcError(status.INVALID_ARGUMENT, "capacity must not be negative");
  if (required && limit && required > limit) {
    throw rpcError(status.OUT_OF_RANGE, `required_bytes ${required} exceeds limit_bytes ${limit}`);
  }
  // A restored or cloned volume is at least as large as its source, and by default just as large.
  const wanted = required || limit || source?.sizeBytes || DEFAULT_CAPACITY_BYTES;
  const capacity = Math.max(wanted, source?.sizeBytes ?? 0);
  if (limit && capacity > limit) {
    throw rpcError(
      status.OUT_OF_RANGE,
      `the content source needs ${capacity} bytes, above limit_bytes ${limit}`,
    );
  }
  const id = volumeIdFor(req.name);
  const existing = await ctx.volumes.get(id);
  if (existing) {
    if ((required && existing.capacityBytes < required) || (limit && existing.capacityBytes > limit)) {
      throw rpcError(
        status.ALREADY_EXISTS,
        `volume ${JSON.stringify(req.name)} exists with capacity ${existing.capacityBytes}`,
      );
    }
    if (!sameSource(existing.contentSource, source?.source)) {
      throw rpcError(
        status.ALREADY_EXISTS,
        `volume ${JSON.stringify(req.name)} exists with another content source`,
      );
    }
    return volumeAnswer(ctx, existing);
  }
  if ((await ctx.volumes.count()) >= ctx.config.maxVolumes) {
    throw rpcError(status.RESOURCE_EXHAUSTED, `at most ${ctx.config.maxVolumes} volumes`);
  }
  const vol: HostpathVolume = {
    id,
    name: req.name,
    capacityBytes: capacity,
    createdAt: new Date().toISOString(),
    contentSource: source ? source.source : undefined,
  };
  const topology = requestedTopology(req);
  await checkRoom(ctx, topology, capacity);
  if (topology) vol.accessibleTopology = topology;
  const made = withMutableParameters(ctx, vol, req.mutable_parameters);
  await ctx.volumes.create(made, source?.fill);
  return volumeAnswer(ctx, made);
}

/** Mount points whose source is this volume's directory (bind mounts keep it as their root). */
export async function mountsOfVolume(volumes: VolumeStore, id: string): Promise<string[]> {
  const suffix = "/volumes/" + id;
  return (await readMounts()).filter((m) => m.root.endsWith(suffix)).map((m) => m.mountPoint);
}

export async function deleteVolume(ctx: HostpathContext, req: { volume_id: string }): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  // Unknown (or never-valid) ids: the volume is gone, which is what the caller wants (spec).
  if (!(await ctx.volumes.get(req.volume_id))) return {};
  const inUse = await mountsOfVolume(ctx.volumes, req.volume_id);
  if (inUse.length > 0)
    throw rpcError(status.FAILED_PRECONDITION, `volume ${req.volume_id} is still mounted`);
  const attached = await ctx.attachments.list(req.volume_id);
  if (attached.length > 0) {
    throw rpcError(
      status.FAILED_PRECONDITION,
      `volume ${req.volume_id} is still published to node ${attached[0]!.nodeId}`,
    );
  }
  await deleteBlockImage(ctx, req.volume_id);
  await ctx.volumes.delete(req.volume_id);
  return {};
}

export async function validateVolumeCapabilities(
  ctx: HostpathContext,
  req: {
    volume_id: string;
    volume_capabilities: WireVolumeCapability[];
    volume_context: Record<string, string>;
  },
): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  if (req.volume_capabilities.length === 0)
    throw rpcError(status.INVALID_ARGUMENT, "volume_capabilities is required");
  if (!(await ctx.volumes.get(req.volume_id)))
    throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  const problem = req.volume_capabilities.map((c) => capabilityProblem(ctx.config, c)).find((p) => p);
  if (problem) return { message: problem };
  return { confirmed: { volume_capabilities: req.volume_capabilities, volume_context: req.volume_context } };
}
