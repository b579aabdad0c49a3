/**
 * CreateVolume's volume_content_source in csi-hostpath: a snapshot (restore) or another volume
 * (clone). The source's directory is copied into the new volume before its metadata is written
 * (VolumeStore.create's fill), so a restored or cloned volume never exists half-filled.
 */
import fs from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import type { WireContentSource } from "../wire.js";
import { rpcError, type HostpathContext } from "./context.js";
import type { SnapshotStore } from "./snapshots.js";

export interface ResolvedSource {
  source: { snapshotId: string } | { volumeId: string };
  /** The smallest capacity the new volume may have. */
  sizeBytes: number;
  /** Copies the source's content into the new volume's directory. */
  fill: (dir: string) => Promise<void>;
}

/** Null without a source; NOT_FOUND for an unknown snapshot or volume (spec). */
export async function resolveContentSource(
  ctx: HostpathContext,
  snapshots: SnapshotStore,
  src: WireContentSource | null | undefined,
): Promise<ResolvedSource | null> {
  if (src?.snapshot) {
    const snap = await snapshots.get(src.snapshot.snapshot_id);
    if (!snap) throw rpcError(status.NOT_FOUND, `snapshot ${src.snapshot.snapshot_id} not found`);
    return {
      source: { snapshotId: snap.id },
      sizeBytes: snap.sizeBytes,
      fill: (dir) => copyInto(snapshots.dirOf(snap.id), dir),
    };
  }
  if (src?.volume) {
    const vol = await ctx.volumes.get(src.volume.volume_id);
    if (!vol) throw rpcError(status.NOT_FOUND, `volume ${src.volume.volume_id} not found`);
    return {
      source: { volumeId: vol.id },
      sizeBytes: vol.capacityBytes,
      fill: (dir) => copyInto(ctx.volumes.dirOf(vol.id), dir),
    };
  }
  return null;
}

async function copyInto(from: string, to: string): Promise<void> {
  await fs.cp(from, to, { recursive: true, preserveTimestamps: true });
}

/** Whether an existing volume was made from the same source a repeated CreateVolume asks for. */
export function sameSource(
  a: { snapshotId: string } | { volumeId: string } | undefined,
  b: { snapshotId: string } | { volumeId: string } | undefined,
): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
