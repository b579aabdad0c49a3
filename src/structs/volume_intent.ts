/**
 * Create intents and orphaned storage. CSI's CreateVolume is idempotent by `name` (the volume's
 * Name, which berth passes as Nomad does): the plugin answers the same storage for the same name.
 * So berth records the name it is about to create BEFORE it calls the plugin, and removes that
 * record in the same write that records the volume. An intent that outlives its create (the server
 * crashed or lost the answer between the plugin's CreateVolume and the record) marks storage the
 * plugin may hold that no berth volume records: an orphan, reported until an operator adopts it
 * (the create is completed: CreateVolume again with the same name and spec answers the existing
 * storage, which is recorded under the intended ID) or deletes it.
 */
import type { CSIVolume } from "./volume.js";

export interface VolumeCreateIntent {
  Namespace: string;
  /** The berth volume ID the create was for. */
  ID: string;
  PluginID: string;
  /** The name passed to CreateVolume. */
  Name: string;
  /** The spec as requested (secrets included, stored as volume records are): adopt repeats it. */
  Spec: CSIVolume;
  /** When the create started, Unix nanoseconds. */
  CreateTime: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/**
 * An orphan as the API reports it (GET /v1/volumes/orphans): an interrupted create and what the
 * plugin lists that no berth volume records. Nomad has no such list; the shape follows its volume
 * stubs (PascalCase, Namespace/ID/PluginID, index fields) and carries no secrets.
 */
export interface CSIVolumeOrphan {
  ID: string;
  Namespace: string;
  Name: string;
  PluginID: string;
  CreateTime: number;
  /**
   * External IDs of the storage the plugin lists (ListVolumes) that no berth volume records — the
   * candidates for this create's storage (CSI lists no names, so berth cannot say which one it is
   * without asking CreateVolume, which adopt and delete do). Null when the plugin's controller does
   * not list volumes or the listing failed (ListError says why).
   */
  UnrecordedStorage: string[] | null;
  ListError: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export function intentOf(spec: CSIVolume, now: number): VolumeCreateIntent {
  return {
    Namespace: spec.Namespace,
    ID: spec.ID,
    PluginID: spec.PluginID,
    Name: spec.Name,
    Spec: spec,
    CreateTime: now * 1_000_000,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}
