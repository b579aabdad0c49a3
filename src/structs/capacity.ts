/**
 * Storage capacity as the leader measured it (issue 33 item 2; Nomad #10325, Kubernetes
 * CSIStorageCapacity): per plugin, one entry per topology segment its controller was asked
 * GetCapacity for. Kept in the state store beside the plugin (`plugin_capacity`, one row per plugin)
 * and shown in `GET /v1/plugin/csi/:id?capacity=true` as `Capacity`. Pure data and the ClientCSI
 * call's shapes; what fits where is capacity_fit.ts.
 */
import type { Topology } from "./volume.js";

/** One GetCapacity answer for one segment. */
export interface CapacityEntry {
  /** The segment asked about; `{}` = the plugin as a whole (no node reports a topology). */
  Segments: Record<string, string>;
  /** GetCapacity's available_capacity, bytes. */
  AvailableBytes: number;
  /** GetCapacity's maximum_volume_size / minimum_volume_size; null when the plugin did not say. */
  MaximumVolumeSize: number | null;
  MinimumVolumeSize: number | null;
  /** When the answer came (unix ms, the leader's wall clock). */
  MeasuredAt: number;
  /**
   * From this instant (unix ms) the entry is stale and counts as unknown (a few poll intervals
   * after MeasuredAt): a leader that stopped polling never keeps refusing on old numbers.
   */
  StaleAt: number;
}

/** A plugin's capacities: the stored record. */
export interface PluginCapacity {
  PluginID: string;
  /** In segment order (capacity_fit.ts segmentKey), one per segment. */
  Entries: CapacityEntry[];
  /** The last poll's failure (code and message), "" when it succeeded. Entries keep their last answers. */
  LastError: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** ClientCSI.ControllerGetCapacity: GetCapacity run by a node hosting a healthy controller. */
export interface ControllerGetCapacityRequest {
  PluginID: string;
  /** The segment asked about; null = the whole plugin (no accessible_topology in the request). */
  Topology: Topology | null;
  Parameters: Record<string, string>;
}

export interface ControllerGetCapacityResponse {
  AvailableCapacity: number;
  MaximumVolumeSize: number | null;
  MinimumVolumeSize: number | null;
}
