/**
 * CreateSnapshot, DeleteSnapshot and ListSnapshots of csi-hostpath (snapshots.ts stores them).
 * CreateSnapshot is idempotent by name: the same name and source answer the existing snapshot, the
 * same name with another source is ALREADY_EXISTS. A snapshot is ready as soon as it is answered.
 */
import { status } from "@grpc/grpc-js";
import { snapshotToWire } from "../convert.js";
import { rpcError, type HostpathContext } from "./context.js";
import { page } from "./paging.js";
import { snapshotIdFor, type HostpathSnapshot, type SnapshotStore } from "./snapshots.js";

function answer(s: HostpathSnapshot): object {
  return snapshotToWire({
    snapshotId: s.id,
    sourceVolumeId: s.sourceVolumeId,
    sizeBytes: s.sizeBytes,
    creationTime: s.createdAt,
    readyToUse: true,
  });
}

export async function createSnapshot(
  ctx: HostpathContext,
  snapshots: SnapshotStore,
  req: { source_volume_id: string; name: string },
): Promise<object> {
  if (!req.name) throw rpcError(status.INVALID_ARGUMENT, "name is required");
  if (!req.source_volume_id) throw rpcError(status.INVALID_ARGUMENT, "source_volume_id is required");
  const id = snapshotIdFor(req.name);
  const existing = await snapshots.get(id);
  if (existing) {
    if (existing.sourceVolumeId !== req.source_volume_id) {
      throw rpcError(
        status.ALREADY_EXISTS,
        `snapshot ${JSON.stringify(req.name)} exists for volume ${existing.sourceVolumeId}`,
      );
    }
    return { snapshot: answer(existing) };
  }
  const vol = await ctx.volumes.get(req.source_volume_id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${req.source_volume_id} not found`);
  const snap: HostpathSnapshot = {
    id,
    name: req.name,
    sourceVolumeId: vol.id,
    sizeBytes: vol.capacityBytes,
    createdAt: Date.now(),
  };
  await snapshots.create(snap, ctx.volumes.dirOf(vol.id));
  ctx.log.info("snapshot created", { snapshot_id: id, volume_id: vol.id });
  return { snapshot: answer(snap) };
}

/** An unknown snapshot is success (spec). */
export async function deleteSnapshot(
  ctx: HostpathContext,
  snapshots: SnapshotStore,
  req: { snapshot_id: string },
): Promise<object> {
  if (!req.snapshot_id) throw rpcError(status.INVALID_ARGUMENT, "snapshot_id is required");
  await snapshots.delete(req.snapshot_id);
  ctx.log.info("snapshot deleted", { snapshot_id: req.snapshot_id });
  return {};
}

/** Filters by snapshot_id and/or source_volume_id; an unknown snapshot_id lists nothing (spec). */
export async function listSnapshots(
  snapshots: SnapshotStore,
  req: { max_entries: number; starting_token: string; source_volume_id: string; snapshot_id: string },
): Promise<object> {
  const all = (await snapshots.list()).filter(
    (s) =>
      (!req.snapshot_id || s.id === req.snapshot_id) &&
      (!req.source_volume_id || s.sourceVolumeId === req.source_volume_id),
  );
  const { entries, nextToken } = page(all, req.max_entries, req.starting_token);
  return { entries: entries.map((s) => ({ snapshot: answer(s) })), next_token: nextToken };
}
