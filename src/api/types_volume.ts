/**
 * The HTTP API's CSI volume shapes: volumes, claims, capabilities, specs, snapshots and plugin-listed volumes.
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

import type { AllocationListStub } from "./types_alloc.js";
import type { MountOptions } from "./types_job.js";
import type { CSITopology } from "./types_node.js";
import type { VolumeCreatedBy } from "./types_volume_create.js";

export interface VolumeCapability {
  /** One of the seven access modes: "single-node-reader-only" | "single-node-writer" | "single-node-single-writer" | "single-node-multi-writer" | "multi-node-reader-only" | "multi-node-single-writer" | "multi-node-multi-writer" */
  AccessMode: string;
  /** "file-system" | "block-device" */
  AttachmentMode: string;
}

export interface CSITopologyRequest {
  Required: CSITopology[] | null;
  Preferred: CSITopology[] | null;
}

export interface CSIVolumeClaim {
  AllocationID: string;
  NodeID: string;
  ExternalNodeID: string;
  /** "read" | "write" */
  Mode: string;
  AccessMode: string;
  AttachmentMode: string;
  /** "taken" | "node-detached" | "controller-detached" | "ready-to-free" */
  State: string;
  /** berth's addition: why the claim's release is not done yet; absent or null when nothing is pending. */
  ReleaseStatus?: CSIClaimReleaseStatus | null;
}

export interface CSIClaimReleaseStatus {
  /** node-unpublish, node-unstage, wait-plugin, server-unpublish, controller-unpublish, server-release, fence-hold, orphan-release */
  Step: string;
  LastError: string;
  Attempts: number;
  /** Unix nanoseconds; 0 when not known. */
  NextAttempt: number;
  /** Unix nanoseconds. */
  UpdateTime: number;
}

export interface CSIVolume {
  ID: string;
  Name: string;
  Namespace: string;
  ExternalID: string;
  PluginID: string;
  Provider: string;
  ProviderVersion: string;
  RequestedCapabilities: VolumeCapability[];
  /** Mode of the current claims; "" when unclaimed. */
  AccessMode: string;
  AttachmentMode: string;
  MountOptions: MountOptions | null;
  /** Always null in answers: secrets never leave the server. */
  Secrets: Record<string, string> | null;
  Parameters: Record<string, string>;
  /** berth's: parameters ControllerModifyVolume may change (absent when none). */
  MutableParameters?: Record<string, string>;
  Context: Record<string, string>;
  /** Bytes. */
  Capacity: number;
  RequestedCapacityMin: number;
  RequestedCapacityMax: number;
  SnapshotID: string;
  CloneID: string;
  Topologies: CSITopology[];
  RequestedTopologies: CSITopologyRequest | null;
  /** Keyed by alloc ID; values are null in answers (Nomad's shape). */
  ReadAllocs: Record<string, null>;
  WriteAllocs: Record<string, null>;
  Allocations: AllocationListStub[];
  Schedulable: boolean;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  /** RFC 3339 (Nomad's time.Time); the zero time 0001-01-01T00:00:00Z when never exhausted. */
  ResourceExhausted: string;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds of the first / latest register or create; 0 on volumes from before them. */
  CreateTime: number;
  ModifyTime: number;
  /** berth: set on a volume a job created from its jobspec. */
  CreatedBy?: VolumeCreatedBy;
}

/**
 * berth's claim records (mode, state of the release, where it waits), which Nomad never serialises.
 * Only `GET /v1/volume/csi/:id?claims=true` answers them, so Nomad's clients see Nomad's shape.
 */
export interface CSIVolumeClaims {
  ReadClaims: Record<string, CSIVolumeClaim>;
  WriteClaims: Record<string, CSIVolumeClaim>;
  PastClaims: Record<string, CSIVolumeClaim>;
}

export type CSIVolumeWithClaims = CSIVolume & CSIVolumeClaims;

/**
 * berth's measured usage and health of a volume (NodeGetVolumeStats on a node that publishes it),
 * answered only by `GET /v1/volume/csi/:id?usage=true`; null until a node reported. UpdateTime is
 * Unix nanoseconds of the report that last changed it (figures are reported on change only).
 */
export interface CSIVolumeUsage {
  NodeID: string;
  BytesUsed: number;
  BytesAvailable: number;
  BytesTotal: number;
  InodesUsed: number;
  InodesAvailable: number;
  InodesTotal: number;
  Abnormal: boolean;
  Message: string;
  UpdateTime: number;
}

/**
 * The condition the volume's controller plugin reported to ControllerGetVolume (polled by the
 * leader when the plugin advertises GET_VOLUME and VOLUME_CONDITION); UpdateTime is Unix
 * nanoseconds of the poll that last changed it (written on change only).
 */
export interface CSIVolumeControllerCondition {
  Abnormal: boolean;
  Message: string;
  UpdateTime: number;
}

/** What `?usage=true` adds; absent from a server that does not know it. */
export interface CSIVolumeUsageField {
  Usage?: CSIVolumeUsage | null;
  /** null until the controller plugin was polled. */
  ControllerCondition?: CSIVolumeControllerCondition | null;
}

export interface CSIVolumeListStub {
  ID: string;
  Namespace: string;
  Name: string;
  ExternalID: string;
  Topologies: CSITopology[];
  AccessMode: string;
  AttachmentMode: string;
  CurrentReaders: number;
  CurrentWriters: number;
  Schedulable: boolean;
  PluginID: string;
  Provider: string;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  /** RFC 3339 (Nomad's time.Time); the zero time 0001-01-01T00:00:00Z when never exhausted. */
  ResourceExhausted: string;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds of the first / latest register or create; 0 on volumes from before them. */
  CreateTime: number;
  ModifyTime: number;
}

/**
 * What a volume spec sets, as sent to register/create: only the keys the spec gave, so the server's
 * defaults (e.g. Name = ID, Namespace = "default") apply to the rest.
 */
export type CSIVolumeSpec = Partial<
  Pick<
    CSIVolume,
    | "ID"
    | "Name"
    | "Namespace"
    | "ExternalID"
    | "PluginID"
    | "RequestedCapabilities"
    | "MountOptions"
    | "Secrets"
    | "Parameters"
    | "MutableParameters"
    | "Context"
    | "RequestedCapacityMin"
    | "RequestedCapacityMax"
    | "SnapshotID"
    | "CloneID"
    | "RequestedTopologies"
  >
>;

/** A CSI snapshot (Nomad's CSISnapshot). `Secrets` are sent on create and always null in answers. */
export interface CSISnapshot {
  ID: string;
  ExternalSourceVolumeID: string;
  SizeBytes: number;
  /** Unix seconds. */
  CreateTime: number;
  IsReady: boolean;
  SourceVolumeID: string;
  PluginID: string;
  Name: string;
  Secrets: Record<string, string> | null;
  Parameters: Record<string, string> | null;
}

export interface CSISnapshotListResponse {
  Snapshots: CSISnapshot[];
  NextToken: string;
}

/** A volume as its plugin lists it (ListVolumes), registered in berth or not. */
export interface CSIVolumeExternalStub {
  ExternalID: string;
  CapacityBytes: number;
  VolumeContext: Record<string, string>;
  CloneID: string;
  SnapshotID: string;
  PublishedExternalNodeIDs: string[];
  IsAbnormal: boolean;
  Status: string;
}

export interface CSIVolumeExternalListResponse {
  Volumes: CSIVolumeExternalStub[];
  NextToken: string;
}

/**
 * An interrupted create whose storage the plugin may hold while no berth volume records it
 * (GET /v1/volumes/orphans; berth's, Nomad has none). `UnrecordedStorage` is what the plugin lists
 * that no berth volume records, null when its controller cannot list volumes (`ListError`).
 */
export interface CSIVolumeOrphan {
  ID: string;
  Namespace: string;
  Name: string;
  PluginID: string;
  CreateTime: number;
  UnrecordedStorage: string[] | null;
  ListError: string;
  CreateIndex: number;
  ModifyIndex: number;
}
