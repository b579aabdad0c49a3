/**
 * CSI volume records and the claim rules. Field names follow Nomad's JSON (PascalCase) so a record
 * is also its API shape once secrets are redacted (see redact.ts); no mapping layer in between.
 */
import type { CSIPlugin } from "./plugin.js";
import {
  ACCESS_MODES,
  ATTACHMENT_MODES,
  type AccessMode,
  type AttachmentMode,
  type MountOptions,
} from "./csi_terms.js";
import type { CSIVolumeUsage } from "./volume_usage.js";
import type { CSIVolumeControllerCondition } from "./volume_condition.js";
import type { VolumeAttachmentReconcile } from "./attachment_reconcile.js";

export type { CSIVolumeUsage } from "./volume_usage.js";
export type { CSIVolumeControllerCondition } from "./volume_condition.js";

export {
  ACCESS_MODES,
  ATTACHMENT_MODES,
  type AccessMode,
  type AttachmentMode,
  type MountOptions,
} from "./csi_terms.js";

export function isAccessMode(v: unknown): v is AccessMode {
  return typeof v === "string" && (ACCESS_MODES as readonly string[]).includes(v);
}
export function isAttachmentMode(v: unknown): v is AttachmentMode {
  return typeof v === "string" && (ATTACHMENT_MODES as readonly string[]).includes(v);
}
/** Every mode but the two reader-only ones admits write claims. */
export function isWriteAccessMode(m: AccessMode): boolean {
  return m !== "single-node-reader-only" && m !== "multi-node-reader-only";
}
/** The single-node-* modes: every claim on one node. */
export function isSingleNodeAccessMode(m: AccessMode): boolean {
  return m.startsWith("single-node-");
}

export interface VolumeCapability {
  AccessMode: AccessMode;
  AttachmentMode: AttachmentMode;
}

export interface Topology {
  Segments: Record<string, string>;
}

export interface TopologyRequest {
  Required: Topology[] | null;
  Preferred: Topology[] | null;
}

export type ClaimMode = "read" | "write";

/**
 * The release walk of one claim. Each step is persisted before the next starts, so a restarted
 * server resumes where it stopped: taken → node-detached → controller-detached → ready-to-free.
 */
export type ClaimState = "taken" | "node-detached" | "controller-detached" | "ready-to-free";

export interface VolumeClaim {
  AllocationID: string;
  NodeID: string;
  /** The storage provider's ID for the node, from the node plugin's NodeGetInfo. */
  ExternalNodeID: string;
  Mode: ClaimMode;
  AccessMode: AccessMode;
  AttachmentMode: AttachmentMode;
  State: ClaimState;
  /**
   * berth's addition to Nomad's claim: why the claim's release is not done yet — which step is
   * failing or waiting, its last error and its next attempt. Absent (or null) while nothing is
   * pending; dropped when the claim's state advances (the step succeeded) or the claim is freed.
   */
  ReleaseStatus?: ClaimReleaseStatus | null;
  /**
   * berth-internal, never in API answers (see withoutInternalClaimFields): the plugin whose
   * controller was asked to ControllerPublishVolume this volume to the claim's node. Set, in the
   * claim's own transaction, BEFORE the call (a publish that timed out may have attached), and
   * handed to the node's other claims when this one is freed while they still hold the volume (the
   * attachment is the node's). Absent: no ControllerPublish ran for it. A claim that carries it is
   * released through ControllerUnpublishVolume whatever the plugin's ControllerRequired says now
   * (the controller that attached may be down, and its plugin no longer look attach-capable).
   */
  ControllerPublishPluginID?: string;
}

/** A claim as the API shows it: berth's internal bookkeeping (ControllerPublishPluginID) left out. */
export function withoutInternalClaimFields(claim: VolumeClaim): VolumeClaim {
  const { ControllerPublishPluginID: _internal, ...rest } = claim;
  return rest;
}

/**
 * The release steps a claim can be stuck or waiting in. On the node: NodeUnpublishVolume,
 * NodeUnstageVolume, waiting for the node plugin to register, asking the server to unpublish. On
 * the server (the volumewatcher): ControllerUnpublishVolume, or the rest of the walk; holding a
 * single-writer claim of a down node for the node's self-fence bound (`fence-hold`); releasing
 * without the node step a claim its live node confirmed it never staged or published and has no
 * release pending for (`orphan-release`: the claim's answer never reached the node).
 */
export const RELEASE_STATUS_STEPS = [
  "node-unpublish",
  "node-unstage",
  "wait-plugin",
  "server-unpublish",
  "controller-unpublish",
  "server-release",
  "fence-hold",
  "orphan-release",
] as const;
export type ReleaseStatusStep = (typeof RELEASE_STATUS_STEPS)[number];
/** The steps only the node agent runs, while the claim is still `taken`. */
export const NODE_RELEASE_STEPS: readonly ReleaseStatusStep[] = [
  "node-unpublish",
  "node-unstage",
  "wait-plugin",
];

export interface ClaimReleaseStatus {
  Step: ReleaseStatusStep;
  /** The last failure, secrets redacted (as every CSI error is); "" while only waiting. */
  LastError: string;
  /** Failed attempts of this step so far. */
  Attempts: number;
  /** When the next attempt starts, Unix nanoseconds (Nomad's time fields); 0 when not known. */
  NextAttempt: number;
  /** When this status was recorded, Unix nanoseconds. */
  UpdateTime: number;
}

/**
 * `vol` with the release status of `allocId`'s claim set (or cleared with null), wherever the claim
 * is (live or past). Unknown allocs leave the volume unchanged. Pure.
 */
export function withReleaseStatus(
  vol: CSIVolume,
  allocId: string,
  status: ClaimReleaseStatus | null,
): CSIVolume {
  for (const key of ["ReadClaims", "WriteClaims", "PastClaims"] as const) {
    const claim = vol[key][allocId];
    if (!claim) continue;
    const { ReleaseStatus: _old, ...rest } = claim;
    return { ...vol, [key]: { ...vol[key], [allocId]: status ? { ...rest, ReleaseStatus: status } : rest } };
  }
  return vol;
}

export interface CSIVolume {
  ID: string;
  Name: string;
  Namespace: string;
  ExternalID: string;
  PluginID: string;
  /** Provider name and version from the plugin's GetPluginInfo, filled when read. */
  Provider: string;
  ProviderVersion: string;
  /** The capabilities the volume was registered/created with; a claim must match one of them. */
  RequestedCapabilities: VolumeCapability[];
  /** Mode of the current claims ('' when unclaimed): every live claim shares it. */
  AccessMode: AccessMode | "";
  AttachmentMode: AttachmentMode | "";
  MountOptions: MountOptions | null;
  Secrets: Record<string, string> | null;
  Parameters: Record<string, string>;
  /**
   * berth's (CSI 1.9's mutable_parameters; Nomad has none): parameters the controller may change on
   * an existing volume (ControllerModifyVolume, volume_reapply.ts). Absent when the spec sets none.
   */
  MutableParameters?: Record<string, string>;
  Context: Record<string, string>;
  Capacity: number;
  RequestedCapacityMin: number;
  RequestedCapacityMax: number;
  SnapshotID: string;
  CloneID: string;
  Topologies: Topology[];
  RequestedTopologies: TopologyRequest | null;

  ReadClaims: Record<string, VolumeClaim>;
  WriteClaims: Record<string, VolumeClaim>;
  /** Claims being released (node-detached or later); they still count for ControllerUnpublish. */
  PastClaims: Record<string, VolumeClaim>;

  /** Denormalised from the plugin record when read (see denormalizeVolume). */
  Schedulable: boolean;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  /** Unix ms at which the plugin last said it was out of capacity; null: never (API: time.Time). */
  ResourceExhausted: number | null;

  CreateIndex: number;
  ModifyIndex: number;
  /**
   * Unix nanoseconds (Nomad's int64 CreateTime/ModifyTime) of the first and the latest register or
   * create. Optional: records stored before they existed carry neither (the API answers 0).
   */
  CreateTime?: number;
  ModifyTime?: number;
  /**
   * The latest measured usage and health from a node that publishes it (volume_usage.ts); absent
   * until a node reports. Only `GET /v1/volume/csi/:id?usage=true` answers it.
   */
  Usage?: CSIVolumeUsage | null;
  /**
   * The condition the controller plugin last reported (ControllerGetVolume, volume_condition.ts);
   * absent until the leader polled a plugin that reports it. Answered with `?usage=true` only.
   */
  ControllerCondition?: CSIVolumeControllerCondition | null;
  /** The attachment reconciler's last correction (attachment_reconcile.ts); absent until one. */
  AttachmentReconcile?: VolumeAttachmentReconcile | null;
  /** berth: the job that created this volume from its jobspec, and its purge lifecycle. */
  CreatedBy?: VolumeCreatedBy;
}

/** What a job's purge does to a volume the job created: delete it (once unclaimed) or keep it. */
export type VolumeOnPurge = "delete" | "retain";
export const VOLUME_ON_PURGE: readonly VolumeOnPurge[] = ["delete", "retain"];

/** Set on a volume a job's `volume { create { … } }` made (structs/job_volume_create.ts). */
export interface VolumeCreatedBy {
  JobID: string;
  TaskGroup: string;
  /** The group's volume block (its alias). */
  Volume: string;
  OnPurge: VolumeOnPurge;
}

export function newVolume(init: Partial<CSIVolume> & Pick<CSIVolume, "ID" | "PluginID">): CSIVolume {
  return {
    Name: init.ID,
    Namespace: "default",
    ExternalID: "",
    Provider: "",
    ProviderVersion: "",
    RequestedCapabilities: [],
    AccessMode: "",
    AttachmentMode: "",
    MountOptions: null,
    Secrets: null,
    Parameters: {},
    Context: {},
    Capacity: 0,
    RequestedCapacityMin: 0,
    RequestedCapacityMax: 0,
    SnapshotID: "",
    CloneID: "",
    Topologies: [],
    RequestedTopologies: null,
    ReadClaims: {},
    WriteClaims: {},
    PastClaims: {},
    Schedulable: false,
    ControllerRequired: false,
    ControllersHealthy: 0,
    ControllersExpected: 0,
    NodesHealthy: 0,
    NodesExpected: 0,
    ResourceExhausted: null,
    CreateIndex: 0,
    ModifyIndex: 0,
    ...init,
  };
}

/**
 * Fills the plugin-derived fields of a volume from its plugin record (or marks it unschedulable
 * when the plugin is unknown). Pure: returns a new object.
 */
export function denormalizeVolume(
  vol: CSIVolume,
  plugin: Omit<CSIPlugin, "Controllers" | "Nodes"> | undefined,
): CSIVolume {
  if (!plugin) {
    return {
      ...vol,
      Schedulable: false,
      ControllerRequired: false,
      ControllersHealthy: 0,
      ControllersExpected: 0,
      NodesHealthy: 0,
      NodesExpected: 0,
    };
  }
  const controllerRequired = plugin.ControllerRequired;
  const schedulable = plugin.NodesHealthy > 0 && (!controllerRequired || plugin.ControllersHealthy > 0);
  return {
    ...vol,
    Provider: plugin.Provider,
    ProviderVersion: plugin.Version,
    Schedulable: schedulable,
    ControllerRequired: controllerRequired,
    ControllersHealthy: plugin.ControllersHealthy,
    ControllersExpected: plugin.ControllersExpected,
    NodesHealthy: plugin.NodesHealthy,
    NodesExpected: plugin.NodesExpected,
  };
}

/** Every live (taken) claim, readers and writers. */
export function liveClaims(vol: CSIVolume): VolumeClaim[] {
  return [...Object.values(vol.ReadClaims), ...Object.values(vol.WriteClaims)];
}

/** True when the volume has no claim at any stage, live or being released. */
export function isUnclaimed(vol: CSIVolume): boolean {
  return (
    Object.keys(vol.ReadClaims).length === 0 &&
    Object.keys(vol.WriteClaims).length === 0 &&
    Object.keys(vol.PastClaims).length === 0
  );
}
