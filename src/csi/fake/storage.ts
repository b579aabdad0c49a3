/**
 * The fake plugin's default answers for expansion, snapshots and ListVolumes: enough state to
 * answer consistently (a snapshot is remembered by name; expansion raises the volume's recorded
 * capacity), nothing copied. Tests needing other answers program the method (behaviour.ts).
 */
import { status } from "@grpc/grpc-js";
import { FakeRpcError } from "./behaviour.js";
import type { FakeState } from "./state.js";

interface FakeSnapshot {
  snapshot_id: string;
  source_volume_id: string;
  size_bytes: number;
  creation_time: { seconds: number; nanos: number };
  ready_to_use: boolean;
}

const fail = (code: status, message: string): FakeRpcError => new FakeRpcError(code, message);

export class FakeStorage {
  /** By snapshot name. */
  readonly snapshots = new Map<string, FakeSnapshot>();

  constructor(private readonly state: FakeState) {}

  private volumeById(id: string) {
    return [...this.state.volumes.values()].find((v) => v.volume_id === id);
  }

  controllerExpand(req: { volume_id: string; capacity_range: { required_bytes: number } | null }): object {
    const vol = this.volumeById(req.volume_id);
    if (!vol) throw fail(status.NOT_FOUND, `volume ${req.volume_id} not found`);
    vol.capacity_bytes = Math.max(vol.capacity_bytes, Number(req.capacity_range?.required_bytes ?? 0));
    return { capacity_bytes: vol.capacity_bytes, node_expansion_required: true };
  }

  nodeExpand(req: { volume_id: string; volume_path: string }): object {
    if (!req.volume_id || !req.volume_path)
      throw fail(status.INVALID_ARGUMENT, "volume_id and volume_path are required");
    const vol = this.volumeById(req.volume_id);
    if (!vol) throw fail(status.NOT_FOUND, `volume ${req.volume_id} not found`);
    return { capacity_bytes: vol.capacity_bytes };
  }

  createSnapshot(req: { source_volume_id: string; name: string }): object {
    if (!req.name || !req.source_volume_id)
      throw fail(status.INVALID_ARGUMENT, "name and source_volume_id are required");
    const existing = this.snapshots.get(req.name);
    if (existing && existing.source_volume_id !== req.source_volume_id) {
      throw fail(status.ALREADY_EXISTS, `snapshot ${req.name} exists for another volume`);
    }
    const vol = this.volumeById(req.source_volume_id);
    if (!existing && !vol) throw fail(status.NOT_FOUND, `volume ${req.source_volume_id} not found`);
    const snap = existing ?? {
      snapshot_id: `fake-snap-${req.name}`,
      source_volume_id: req.source_volume_id,
      size_bytes: vol!.capacity_bytes,
      creation_time: { seconds: Math.floor(Date.now() / 1000), nanos: 0 },
      ready_to_use: true,
    };
    this.snapshots.set(req.name, snap);
    return { snapshot: snap };
  }

  deleteSnapshot(req: { snapshot_id: string }): object {
    for (const [name, s] of this.snapshots)
      if (s.snapshot_id === req.snapshot_id) this.snapshots.delete(name);
    return {};
  }

  listSnapshots(): object {
    return { entries: [...this.snapshots.values()].map((snapshot) => ({ snapshot })), next_token: "" };
  }

  listVolumes(): object {
    return {
      entries: [...this.state.volumes.values()].map((v) => ({
        volume: {
          volume_id: v.volume_id,
          capacity_bytes: v.capacity_bytes,
          volume_context: v.volume_context,
        },
        status: { published_node_ids: [...(this.state.controllerPublished.get(v.volume_id) ?? [])] },
      })),
      next_token: "",
    };
  }
}
