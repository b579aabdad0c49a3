/**
 * The decoded shapes of the csi.v1 messages berth reads and writes, as produced by proto.ts's loader
 * options (snake_case, enums as strings, absent messages as null). Only fields berth uses are typed.
 */
export type StringMap = Record<string, string>;

export type WireAccessModeName =
  | "UNKNOWN"
  | "SINGLE_NODE_WRITER"
  | "SINGLE_NODE_READER_ONLY"
  | "MULTI_NODE_READER_ONLY"
  | "MULTI_NODE_SINGLE_WRITER"
  | "MULTI_NODE_MULTI_WRITER"
  | "SINGLE_NODE_SINGLE_WRITER"
  | "SINGLE_NODE_MULTI_WRITER";

export interface WireVolumeCapability {
  mount?: { fs_type: string; mount_flags: string[]; volume_mount_group?: string } | null;
  block?: Record<string, never> | null;
  /** A WireAccessModeName, or a mode from a newer spec this berth does not know. */
  access_mode: { mode: string } | null;
  access_type?: "mount" | "block";
}

export interface WireTopology {
  segments: StringMap;
}

export interface WireContentSource {
  snapshot?: { snapshot_id: string } | null;
  volume?: { volume_id: string } | null;
  type?: "snapshot" | "volume";
}

export interface WireVolume {
  capacity_bytes: number;
  volume_id: string;
  volume_context: StringMap;
  content_source: WireContentSource | null;
  accessible_topology: WireTopology[];
}

export interface WireCapacityRange {
  required_bytes: number;
  limit_bytes: number;
}

export interface WirePluginCapability {
  service?: { type: string } | null;
  volume_expansion?: { type: string } | null;
}

export interface WireRpcCapability {
  rpc?: { type: string } | null;
}

export interface WireCreateVolumeRequest {
  name: string;
  capacity_range: WireCapacityRange | null;
  volume_capabilities: WireVolumeCapability[];
  parameters: StringMap;
  secrets: StringMap;
  volume_content_source: WireContentSource | null;
  accessibility_requirements: { requisite: WireTopology[]; preferred: WireTopology[] } | null;
  /** CSI 1.9 (MODIFY_VOLUME); decoded as {} when absent. */
  mutable_parameters?: StringMap;
}

export interface WireNodeStageRequest {
  volume_id: string;
  publish_context: StringMap;
  staging_target_path: string;
  volume_capability: WireVolumeCapability | null;
  secrets: StringMap;
  volume_context: StringMap;
}

export interface WireNodePublishRequest extends WireNodeStageRequest {
  target_path: string;
  readonly: boolean;
}

/** google.protobuf.Timestamp as decoded (longs as Number). */
export interface WireTimestamp {
  seconds: number;
  nanos: number;
}

export interface WireSnapshot {
  size_bytes: number;
  snapshot_id: string;
  source_volume_id: string;
  creation_time: WireTimestamp | null;
  ready_to_use: boolean;
  group_snapshot_id?: string;
}

export interface WireListVolumesEntry {
  volume: WireVolume | null;
  status: {
    published_node_ids: string[];
    volume_condition: { abnormal: boolean; message: string } | null;
  } | null;
}

/** google.protobuf.Int64Value as decoded: absent is null. */
export type WireInt64Value = { value: number } | null;

/** NodeGetVolumeStatsResponse as decoded (enums as their names, absent message null). */
export interface WireNodeGetVolumeStatsResponse {
  usage: { available: number; total: number; used: number; unit: string }[];
  volume_condition: { abnormal: boolean; message: string } | null;
}
