/**
 * The CSI client contract, in berth's own TypeScript terms (camelCase, numbers for bytes). Only
 * src/csi/ knows protobuf; everything else talks to plugins through these interfaces. Errors are
 * BerthErrors whose codes are the ERR_CSI_* mapping of the gRPC status (see errors.ts).
 */
import type { AccessMode } from "../structs/volume.js";

export interface CsiCallOptions {
  signal?: AbortSignal;
  /** Per-call deadline in milliseconds (sent as the gRPC deadline). */
  timeoutMs?: number;
}

export type CsiAccessType =
  { type: "mount"; fsType: string; mountFlags: string[]; volumeMountGroup?: string } | { type: "block" };

export interface CsiVolumeCapability {
  accessMode: AccessMode;
  access: CsiAccessType;
}

export interface CsiTopology {
  segments: Record<string, string>;
}

export interface CsiPluginInfo {
  name: string;
  vendorVersion: string;
  manifest: Record<string, string>;
}

export interface CsiPluginCapabilities {
  controllerService: boolean;
  volumeAccessibilityConstraints: boolean;
  groupControllerService: boolean;
  onlineExpansion: boolean;
  offlineExpansion: boolean;
}

export interface CsiControllerCapabilities {
  createDeleteVolume: boolean;
  publishUnpublishVolume: boolean;
  listVolumes: boolean;
  getCapacity: boolean;
  createDeleteSnapshot: boolean;
  listSnapshots: boolean;
  cloneVolume: boolean;
  publishReadonly: boolean;
  expandVolume: boolean;
  listVolumesPublishedNodes: boolean;
  volumeCondition: boolean;
  getVolume: boolean;
  singleNodeMultiWriter: boolean;
  modifyVolume: boolean;
}

export interface CsiNodeCapabilities {
  stageUnstageVolume: boolean;
  getVolumeStats: boolean;
  expandVolume: boolean;
  volumeCondition: boolean;
  singleNodeMultiWriter: boolean;
  volumeMountGroup: boolean;
}

export interface CsiNodeInfo {
  nodeId: string;
  maxVolumesPerNode: number;
  accessibleTopology: CsiTopology | null;
}

export interface CsiVolumeInfo {
  volumeId: string;
  capacityBytes: number;
  volumeContext: Record<string, string>;
  contentSource: { snapshotId: string } | { volumeId: string } | null;
  accessibleTopology: CsiTopology[];
}

export interface CreateVolumeRequest {
  name: string;
  capacityRange: { requiredBytes: number; limitBytes: number } | null;
  volumeCapabilities: CsiVolumeCapability[];
  parameters: Record<string, string>;
  secrets: Record<string, string>;
  contentSource: { snapshotId: string } | { volumeId: string } | null;
  accessibilityRequirements: { requisite: CsiTopology[]; preferred: CsiTopology[] } | null;
  /** CSI 1.9's mutable_parameters; set only for a plugin with MODIFY_VOLUME (absent: none). */
  mutableParameters?: Record<string, string>;
}

export interface ControllerPublishRequest {
  volumeId: string;
  nodeId: string;
  volumeCapability: CsiVolumeCapability;
  readonly: boolean;
  secrets: Record<string, string>;
  volumeContext: Record<string, string>;
}

export interface ControllerUnpublishRequest {
  volumeId: string;
  nodeId: string;
  secrets: Record<string, string>;
}

export interface ValidateVolumeCapabilitiesRequest {
  volumeId: string;
  volumeContext: Record<string, string>;
  volumeCapabilities: CsiVolumeCapability[];
  parameters: Record<string, string>;
  secrets: Record<string, string>;
}

export interface ValidateVolumeCapabilitiesResult {
  /** Null when the plugin did not confirm the capabilities; `message` then says why. */
  confirmed: { volumeCapabilities: CsiVolumeCapability[] } | null;
  message: string;
}

export interface NodeStageRequest {
  volumeId: string;
  publishContext: Record<string, string>;
  stagingTargetPath: string;
  volumeCapability: CsiVolumeCapability;
  secrets: Record<string, string>;
  volumeContext: Record<string, string>;
}

export interface NodeUnstageRequest {
  volumeId: string;
  stagingTargetPath: string;
}

export interface NodePublishRequest {
  volumeId: string;
  publishContext: Record<string, string>;
  /** Empty when the plugin does not stage. */
  stagingTargetPath: string;
  targetPath: string;
  volumeCapability: CsiVolumeCapability;
  readonly: boolean;
  secrets: Record<string, string>;
  volumeContext: Record<string, string>;
}

export interface NodeUnpublishRequest {
  volumeId: string;
  targetPath: string;
}

export interface CsiCapacityRange {
  /** 0 means unset (the spec's "no minimum" / "no limit"). */
  requiredBytes: number;
  limitBytes: number;
}

export interface CsiSnapshot {
  snapshotId: string;
  sourceVolumeId: string;
  sizeBytes: number;
  /** Unix milliseconds; 0 when the plugin did not say. */
  creationTime: number;
  readyToUse: boolean;
}

export interface CreateSnapshotRequest {
  sourceVolumeId: string;
  name: string;
  secrets: Record<string, string>;
  parameters: Record<string, string>;
}

export interface ListSnapshotsRequest {
  /** 0: the plugin chooses. */
  maxEntries: number;
  startingToken: string;
  /** Filters ("" for none). */
  sourceVolumeId: string;
  snapshotId: string;
  secrets: Record<string, string>;
}

export interface ListSnapshotsResult {
  entries: CsiSnapshot[];
  nextToken: string;
}

export interface ControllerExpandVolumeRequest {
  volumeId: string;
  capacityRange: CsiCapacityRange;
  secrets: Record<string, string>;
  /** Null when the volume is not in use (offline expansion needs none). */
  volumeCapability: CsiVolumeCapability | null;
}

/** ControllerModifyVolume (MODIFY_VOLUME, CSI 1.9): changes a volume's mutable parameters. */
export interface ControllerModifyVolumeRequest {
  volumeId: string;
  secrets: Record<string, string>;
  mutableParameters: Record<string, string>;
}

export interface ControllerExpandVolumeResult {
  capacityBytes: number;
  nodeExpansionRequired: boolean;
}

export interface NodeExpandVolumeRequest {
  volumeId: string;
  /** Where the volume is published, in the plugin's view. */
  volumePath: string;
  /** "" when the plugin does not stage. */
  stagingTargetPath: string;
  capacityRange: CsiCapacityRange | null;
  volumeCapability: CsiVolumeCapability | null;
  secrets: Record<string, string>;
}

export interface NodeGetVolumeStatsRequest {
  volumeId: string;
  /** Where the volume is published (a publish target), in the plugin's view. */
  volumePath: string;
  /** "" when the plugin does not stage. */
  stagingTargetPath: string;
}

/** One unit's figures of NodeGetVolumeStats (the spec's VolumeUsage). */
export interface CsiUsageFigures {
  available: number;
  total: number;
  used: number;
}

export interface CsiVolumeStats {
  /** The BYTES entry; null when the plugin gave none. */
  bytes: CsiUsageFigures | null;
  /** The INODES entry; null when the plugin gave none. */
  inodes: CsiUsageFigures | null;
  /** Null when the plugin did not report VOLUME_CONDITION. */
  condition: { abnormal: boolean; message: string } | null;
}

export interface ListVolumesRequest {
  maxEntries: number;
  startingToken: string;
}

export interface ListVolumesEntry {
  volume: CsiVolumeInfo;
  /** Node IDs the volume is published to (empty unless LIST_VOLUMES_PUBLISHED_NODES). */
  publishedNodeIds: string[];
  /** Null when the plugin does not report VOLUME_CONDITION. */
  condition: { abnormal: boolean; message: string } | null;
}

/** ControllerGetVolume's answer (GET_VOLUME; the condition needs VOLUME_CONDITION). */
export interface ControllerGetVolumeResult {
  volume: CsiVolumeInfo;
  /** Node IDs the volume is published to (as the plugin reports them). */
  publishedNodeIds: string[];
  /** Null when the plugin sent no volume_condition. */
  condition: { abnormal: boolean; message: string } | null;
}

export interface ListVolumesResult {
  entries: ListVolumesEntry[];
  nextToken: string;
}

export interface GetCapacityRequest {
  volumeCapabilities: CsiVolumeCapability[];
  parameters: Record<string, string>;
  accessibleTopology: CsiTopology | null;
}

export interface CsiCapacity {
  availableCapacity: number;
  /** Null when the plugin did not say. */
  maximumVolumeSize: number | null;
  minimumVolumeSize: number | null;
}

export interface CsiIdentityClient {
  getPluginInfo(opts?: CsiCallOptions): Promise<CsiPluginInfo>;
  getPluginCapabilities(opts?: CsiCallOptions): Promise<CsiPluginCapabilities>;
  /** `ready` false means the plugin answered but is not ready yet (the spec's optional field). */
  probe(opts?: CsiCallOptions): Promise<{ ready: boolean }>;
}

export interface CsiControllerClient {
  controllerGetCapabilities(opts?: CsiCallOptions): Promise<CsiControllerCapabilities>;
  createVolume(req: CreateVolumeRequest, opts?: CsiCallOptions): Promise<CsiVolumeInfo>;
  deleteVolume(
    req: { volumeId: string; secrets: Record<string, string> },
    opts?: CsiCallOptions,
  ): Promise<void>;
  controllerPublishVolume(
    req: ControllerPublishRequest,
    opts?: CsiCallOptions,
  ): Promise<{ publishContext: Record<string, string> }>;
  controllerUnpublishVolume(req: ControllerUnpublishRequest, opts?: CsiCallOptions): Promise<void>;
  validateVolumeCapabilities(
    req: ValidateVolumeCapabilitiesRequest,
    opts?: CsiCallOptions,
  ): Promise<ValidateVolumeCapabilitiesResult>;
  createSnapshot(req: CreateSnapshotRequest, opts?: CsiCallOptions): Promise<CsiSnapshot>;
  deleteSnapshot(
    req: { snapshotId: string; secrets: Record<string, string> },
    opts?: CsiCallOptions,
  ): Promise<void>;
  listSnapshots(req: ListSnapshotsRequest, opts?: CsiCallOptions): Promise<ListSnapshotsResult>;
  controllerExpandVolume(
    req: ControllerExpandVolumeRequest,
    opts?: CsiCallOptions,
  ): Promise<ControllerExpandVolumeResult>;
  controllerModifyVolume(req: ControllerModifyVolumeRequest, opts?: CsiCallOptions): Promise<void>;
  listVolumes(req: ListVolumesRequest, opts?: CsiCallOptions): Promise<ListVolumesResult>;
  getCapacity(req: GetCapacityRequest, opts?: CsiCallOptions): Promise<CsiCapacity>;
  controllerGetVolume(req: { volumeId: string }, opts?: CsiCallOptions): Promise<ControllerGetVolumeResult>;
}

export interface CsiNodeClient {
  nodeGetCapabilities(opts?: CsiCallOptions): Promise<CsiNodeCapabilities>;
  nodeGetInfo(opts?: CsiCallOptions): Promise<CsiNodeInfo>;
  nodeStageVolume(req: NodeStageRequest, opts?: CsiCallOptions): Promise<void>;
  nodeUnstageVolume(req: NodeUnstageRequest, opts?: CsiCallOptions): Promise<void>;
  nodePublishVolume(req: NodePublishRequest, opts?: CsiCallOptions): Promise<void>;
  nodeUnpublishVolume(req: NodeUnpublishRequest, opts?: CsiCallOptions): Promise<void>;
  /** Resolves with the new capacity (0 when the plugin did not say). */
  nodeExpandVolume(req: NodeExpandVolumeRequest, opts?: CsiCallOptions): Promise<{ capacityBytes: number }>;
  /** Usage (bytes, inodes) and, with VOLUME_CONDITION, the condition of a published volume. */
  nodeGetVolumeStats(req: NodeGetVolumeStatsRequest, opts?: CsiCallOptions): Promise<CsiVolumeStats>;
}

/** One connection to one plugin endpoint. */
export interface CsiClient extends CsiIdentityClient, CsiControllerClient, CsiNodeClient {
  readonly endpoint: string;
  close(): void;
}
