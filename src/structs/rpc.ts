/**
 * Agent ↔ server RPC contract: method names and their request/response DTOs. The node agent dials
 * the server and keeps one connection; calls go both ways over it (server → node calls are the
 * ClientCSI.* methods). Errors cross as WireError (code, message, field).
 */
import type {
  ExecCloseRequest,
  ExecInputRequest,
  ExecOpenRequest,
  ExecOpenResponse,
  ExecOutputRequest,
  ExecOutputResponse,
} from "./rpc_exec.js";
import type { Allocation, ClientStatus, TaskState } from "./alloc.js";
import type { RegisteringNode } from "./node.js";
import type { OrderedReport } from "./node_report.js";
import type { CSIInfo } from "./plugin.js";
import type {
  AccessMode,
  AttachmentMode,
  ClaimMode,
  ClaimState,
  MountOptions,
  ReleaseStatusStep,
  Topology,
  TopologyRequest,
  VolumeCapability,
} from "./volume.js";
import type { DriverInfo } from "./node.js";
import type { VolumeUsageUpdateRequest, VolumeUsageUpdateResponse } from "./volume_usage.js";
import type {
  AllocExecRequest,
  AllocExecResponse,
  AllocReadLogRequest,
  AllocReadLogResponse,
  AllocRestartRequest,
  AllocSignalRequest,
  AllocStatsRequest,
} from "./rpc_alloc.js";
import type { AllocResourceUsage } from "./resource_usage.js";
import type { AllocFileInfo, AllocFsPathRequest, AllocFsReadRequest, AllocFsReadResponse } from "./rpc_fs.js";
import type { ControllerGetVolumeRequest, ControllerGetVolumeResponse } from "./volume_condition.js";
import type { NodeVolumeStateRequest, NodeVolumeStateResponse } from "./rpc_volume_state.js";
import type { ControllerGetCapacityRequest, ControllerGetCapacityResponse } from "./capacity.js";

// ---- node → server ----

export interface NodeRegisterRequest extends OrderedReport {
  Node: RegisteringNode;
  IntroToken?: string; // node introduction (server/rpc/node_intro.ts): read for a never-seen node ID only
}
export interface NodeRegisterResponse {
  /** Milliseconds within which the node must heartbeat again before it is marked down. */
  HeartbeatTTL: number;
  Index: number;
}

export interface NodeHeartbeatRequest {
  NodeID: string;
}
export type NodeHeartbeatResponse = NodeRegisterResponse;

export interface NodeFingerprintRequest extends OrderedReport {
  NodeID: string;
  Drivers: Record<string, DriverInfo>;
  CSIControllerPlugins: Record<string, CSIInfo>;
  CSINodePlugins: Record<string, CSIInfo>;
}

/** Blocking query: answers when the node's allocs change past MinIndex, or after WaitMs. */
export interface NodeGetAllocsRequest {
  NodeID: string;
  MinIndex: number;
  WaitMs: number;
}
export interface NodeGetAllocsResponse {
  Allocs: Allocation[];
  Index: number;
}

export interface AllocClientUpdate {
  ID: string;
  ClientStatus: ClientStatus;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
}
export interface NodeUpdateAllocsRequest extends OrderedReport {
  NodeID: string;
  Allocs: AllocClientUpdate[];
}

export interface VolumeClaimRequest {
  VolumeID: string;
  Namespace: string;
  AllocationID: string;
  NodeID: string;
  Mode: ClaimMode;
  AccessMode: AccessMode;
  AttachmentMode: AttachmentMode;
}

/** What a node needs to stage and publish a claimed volume. Secrets travel here, never to the API. */
export interface ClaimedVolume {
  ID: string;
  Namespace: string;
  ExternalID: string;
  PluginID: string;
  AccessMode: AccessMode;
  AttachmentMode: AttachmentMode;
  MountOptions: MountOptions | null;
  Secrets: Record<string, string>;
  Context: Record<string, string>;
  Capacity: number;
}
export interface VolumeClaimResponse {
  Volume: ClaimedVolume;
  PublishContext: Record<string, string>;
  Index: number;
}

/** Asks the server to walk an alloc's claim to release from `State` (normally node-detached). */
export interface VolumeUnpublishRequest {
  VolumeID: string;
  Namespace: string;
  AllocationID: string;
  NodeID: string;
  State: ClaimState;
}
export interface VolumeUnpublishResponse {
  Index: number;
}

/**
 * A node's report that a release step of one of its claims failed and will be retried (or waits):
 * recorded on the claim as its ReleaseStatus, shown by the API and `volume status`. Accepted only
 * for a claim held by the calling node; a node step only while the claim is still taken. One report
 * per failed attempt, so the backoff bounds the writes.
 */
export interface VolumeReleaseProgressRequest {
  VolumeID: string;
  Namespace: string;
  AllocationID: string;
  NodeID: string;
  Step: ReleaseStatusStep;
  /** Redacted like every CSI error; capped in length by the server. */
  LastError: string;
  Attempts: number;
  /** Unix nanoseconds; 0 when not known. */
  NextAttempt: number;
}
export interface VolumeReleaseProgressResponse {
  /** False when there was nothing to record on (claim gone, or past that step). */
  Recorded: boolean;
  Index: number;
}

/** Which plugin serves a volume, so a node agent can wait for that node plugin before claiming. */
export interface VolumeGetForNodeRequest {
  VolumeID: string;
  Namespace: string;
  NodeID: string;
  /**
   * The alloc the lookup is for: the server then checks that one alloc (O(1)) instead of every
   * alloc on the node. Optional so an agent that predates it still gets its answer.
   */
  AllocationID?: string;
}
export interface VolumeGetForNodeResponse {
  ID: string;
  Namespace: string;
  PluginID: string;
}

// ---- server → node (ClientCSI) ----

export interface ControllerCreateVolumeRequest {
  PluginID: string;
  Name: string;
  CapacityMin: number;
  CapacityMax: number;
  Capabilities: VolumeCapability[];
  MountOptions: MountOptions | null;
  Parameters: Record<string, string>;
  Secrets: Record<string, string>;
  SnapshotID: string;
  CloneID: string;
  TopologyRequest: TopologyRequest | null;
  /** berth's: the new volume's mutable parameters (needs MODIFY_VOLUME); absent when none. */
  MutableParameters?: Record<string, string>;
}
export interface ControllerCreateVolumeResponse {
  ExternalVolumeID: string;
  CapacityBytes: number;
  VolumeContext: Record<string, string>;
  Topologies: Topology[];
}

export interface ControllerDeleteVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
  Secrets: Record<string, string>;
}

export interface ControllerValidateVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
  Capabilities: VolumeCapability[];
  MountOptions: MountOptions | null;
  Parameters: Record<string, string>;
  Context: Record<string, string>;
  Secrets: Record<string, string>;
}

export interface ControllerPublishVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
  ExternalNodeID: string;
  Capability: VolumeCapability;
  MountOptions: MountOptions | null;
  ReadOnly: boolean;
  Secrets: Record<string, string>;
  VolumeContext: Record<string, string>;
}
export interface ControllerPublishVolumeResponse {
  PublishContext: Record<string, string>;
}

export interface ControllerUnpublishVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
  ExternalNodeID: string;
  Secrets: Record<string, string>;
}

/** A snapshot as the node agent reports it from the plugin (CreateTime in Unix seconds). */
export interface SnapshotInfo {
  ID: string;
  ExternalSourceVolumeID: string;
  SizeBytes: number;
  CreateTime: number;
  IsReady: boolean;
}

export interface ControllerCreateSnapshotRequest {
  PluginID: string;
  ExternalSourceVolumeID: string;
  Name: string;
  Secrets: Record<string, string>;
  Parameters: Record<string, string>;
}

export interface ControllerDeleteSnapshotRequest {
  PluginID: string;
  SnapshotID: string;
  Secrets: Record<string, string>;
}

export interface ControllerListSnapshotsRequest {
  PluginID: string;
  /** 0: the plugin chooses. */
  MaxEntries: number;
  StartingToken: string;
  Secrets: Record<string, string>;
}
export interface ControllerListSnapshotsResponse {
  Entries: SnapshotInfo[];
  NextToken: string;
}

export interface ControllerExpandVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
  CapacityMin: number;
  CapacityMax: number;
  /** The capability of a current claim, or null for a volume nobody uses. */
  Capability: VolumeCapability | null;
  MountOptions: MountOptions | null;
  Secrets: Record<string, string>;
}
export interface ControllerExpandVolumeResponse {
  CapacityBytes: number;
  NodeExpansionRequired: boolean;
}

/** ControllerModifyVolume (MODIFY_VOLUME): the volume's mutable parameters as they are to be. */
export interface ControllerModifyVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
  MutableParameters: Record<string, string>;
  Secrets: Record<string, string>;
}

export interface ControllerListVolumesRequest {
  PluginID: string;
  MaxEntries: number;
  StartingToken: string;
}
export interface ExternalVolumeInfo {
  ExternalID: string;
  CapacityBytes: number;
  VolumeContext: Record<string, string>;
  CloneID: string;
  SnapshotID: string;
  PublishedExternalNodeIDs: string[];
  IsAbnormal: boolean;
  Status: string;
}
export interface ControllerListVolumesResponse {
  Entries: ExternalVolumeInfo[];
  NextToken: string;
}

/** Names one alloc's use of a volume on the node that receives the call. */
export interface NodeVolumeRef {
  PluginID: string;
  VolumeID: string;
  Namespace: string;
  ExternalID: string;
  AllocID: string;
}

export interface NodeExpandVolumeRequest extends NodeVolumeRef {
  CapacityMin: number;
  CapacityMax: number;
  Secrets: Record<string, string>;
}
export interface NodeExpandVolumeResponse {
  /** 0 when the plugin did not say, or the node plugin does not expand (nothing to do). */
  CapacityBytes: number;
}

/** NodeUnpublish (and NodeUnstage when no other alloc uses the staging) for one alloc. */
export type NodeDetachVolumeRequest = NodeVolumeRef;

/** Method name → [request, response]. Both peers type their handlers and calls from this map. */
export interface ServerMethods {
  "Node.Register": [NodeRegisterRequest, NodeRegisterResponse];
  "Node.Heartbeat": [NodeHeartbeatRequest, NodeHeartbeatResponse];
  "Node.UpdateFingerprint": [NodeFingerprintRequest, { Index: number }];
  "Node.GetAllocs": [NodeGetAllocsRequest, NodeGetAllocsResponse];
  "Node.UpdateAllocs": [NodeUpdateAllocsRequest, { Index: number }];
  "CSIVolume.GetForNode": [VolumeGetForNodeRequest, VolumeGetForNodeResponse];
  "CSIVolume.Claim": [VolumeClaimRequest, VolumeClaimResponse];
  "CSIVolume.Unpublish": [VolumeUnpublishRequest, VolumeUnpublishResponse];
  "CSIVolume.ReleaseProgress": [VolumeReleaseProgressRequest, VolumeReleaseProgressResponse];
  "CSIVolume.UpdateUsage": [VolumeUsageUpdateRequest, VolumeUsageUpdateResponse];
}

export interface ClientMethods {
  "ClientCSI.ControllerCreateVolume": [ControllerCreateVolumeRequest, ControllerCreateVolumeResponse];
  "ClientCSI.ControllerDeleteVolume": [ControllerDeleteVolumeRequest, Record<string, never>];
  "ClientCSI.ControllerValidateVolume": [ControllerValidateVolumeRequest, Record<string, never>];
  "ClientCSI.ControllerPublishVolume": [ControllerPublishVolumeRequest, ControllerPublishVolumeResponse];
  "ClientCSI.ControllerUnpublishVolume": [ControllerUnpublishVolumeRequest, Record<string, never>];
  "ClientCSI.ControllerCreateSnapshot": [ControllerCreateSnapshotRequest, SnapshotInfo];
  "ClientCSI.ControllerDeleteSnapshot": [ControllerDeleteSnapshotRequest, Record<string, never>];
  "ClientCSI.ControllerListSnapshots": [ControllerListSnapshotsRequest, ControllerListSnapshotsResponse];
  "ClientCSI.ControllerExpandVolume": [ControllerExpandVolumeRequest, ControllerExpandVolumeResponse];
  "ClientCSI.ControllerModifyVolume": [ControllerModifyVolumeRequest, Record<string, never>];
  "ClientCSI.ControllerListVolumes": [ControllerListVolumesRequest, ControllerListVolumesResponse];
  "ClientCSI.ControllerGetVolume": [ControllerGetVolumeRequest, ControllerGetVolumeResponse];
  "ClientCSI.ControllerGetCapacity": [ControllerGetCapacityRequest, ControllerGetCapacityResponse];
  "ClientCSI.NodeExpandVolume": [NodeExpandVolumeRequest, NodeExpandVolumeResponse];
  "ClientCSI.NodeDetachVolume": [NodeDetachVolumeRequest, Record<string, never>];
  "ClientCSI.NodeVolumeState": [NodeVolumeStateRequest, NodeVolumeStateResponse];
  "ClientAlloc.Signal": [AllocSignalRequest, Record<string, never>];
  "ClientAlloc.Restart": [AllocRestartRequest, Record<string, never>];
  "ClientAlloc.ReadLog": [AllocReadLogRequest, AllocReadLogResponse];
  "ClientAlloc.Exec": [AllocExecRequest, AllocExecResponse];
  "ClientAlloc.Stats": [AllocStatsRequest, AllocResourceUsage];
  "ClientFS.List": [AllocFsPathRequest, AllocFileInfo[]];
  "ClientFS.Stat": [AllocFsPathRequest, AllocFileInfo];
  "ClientFS.ReadAt": [AllocFsReadRequest, AllocFsReadResponse];
  "ClientAlloc.ExecOpen": [ExecOpenRequest, ExecOpenResponse];
  "ClientAlloc.ExecInput": [ExecInputRequest, Record<string, never>];
  "ClientAlloc.ExecOutput": [ExecOutputRequest, ExecOutputResponse];
  "ClientAlloc.ExecClose": [ExecCloseRequest, Record<string, never>];
}
