/**
 * The HTTP API's JSON shapes, as the berth server (and Nomad) answers them: PascalCase fields,
 * durations and `*Time` fields in nanoseconds unless noted. These are the API's own DTOs, kept apart
 * from src/structs on purpose: a client must not depend on the server's domain code. Enumerated
 * values are typed as `string` (with the known values documented) so a newer server's value never
 * breaks an older client.
 */

/** "service" | "batch" | "system" */
export type JobType = string;

export interface MountOptions {
  FsType: string;
  /** Redacted by the server (`["[REDACTED]"]`) whenever non-empty. */
  MountFlags: string[];
}

export interface VolumeRequest {
  Name: string;
  /** "csi" | "host" */
  Type: string;
  Source: string;
  ReadOnly: boolean;
  /** An access mode (see VolumeCapability) or "" to take the volume's. */
  AccessMode: string;
  AttachmentMode: string;
  MountOptions: MountOptions | null;
  /** Claim `Source[N]` for the alloc with index N. */
  PerAlloc: boolean;
}

export interface VolumeMount {
  Volume: string;
  Destination: string;
  ReadOnly: boolean;
  /** "private" | "host-to-task" | "bidirectional" */
  PropagationMode: string;
}

export interface TaskCSIPluginConfig {
  ID: string;
  /** "node" | "controller" | "monolith" */
  Type: string;
  MountDir: string;
  StagePublishBaseDir: string;
  /** Nanoseconds. */
  HealthTimeout: number;
}

export interface RestartPolicy {
  Attempts: number;
  /** Nanoseconds. */
  Interval: number;
  /** Nanoseconds. */
  Delay: number;
  /** "fail" | "delay" */
  Mode: string;
}

export interface Task {
  Name: string;
  Driver: string;
  Config: Record<string, unknown>;
  Env: Record<string, string>;
  VolumeMounts: VolumeMount[];
  CSIPluginConfig: TaskCSIPluginConfig | null;
  /** Nanoseconds. */
  KillTimeout: number;
  RestartPolicy: RestartPolicy | null;
  /** Absent or null: none. */
  Constraints?: Constraint[] | null;
}

export interface TaskGroup {
  Name: string;
  Count: number;
  Volumes: Record<string, VolumeRequest>;
  Tasks: Task[];
  RestartPolicy: RestartPolicy | null;
  /** Absent or null: none. */
  Constraints?: Constraint[] | null;
}

/** Nomad's placement constraint: `${node.unique.name}` (LTarget) `=` (Operand) `B` (RTarget). */
export interface Constraint {
  LTarget: string;
  RTarget: string;
  /** "=" | "==" | "!=" */
  Operand: string;
}

export interface Job {
  ID: string;
  Name: string;
  Namespace: string;
  Type: JobType;
  Datacenters: string[];
  Priority: number;
  Stop: boolean;
  /** "pending" | "running" | "dead" */
  Status: string;
  TaskGroups: TaskGroup[];
  /** Absent or null: none. */
  Constraints?: Constraint[] | null;
  Version: number;
  /** Unix nanoseconds. */
  SubmitTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
}

export interface JobListStub {
  ID: string;
  Name: string;
  Namespace: string;
  Type: JobType;
  Priority: number;
  Status: string;
  Stop: boolean;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
  /** Unix nanoseconds. */
  SubmitTime: number;
}

export interface JobRegisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
}

export interface JobDeregisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}

/**
 * Nomad's AllocationMetric: why one task group's allocs found no node. The counts are the first
 * failed alloc's; CoalescedFailures says how many more of the group failed the same way.
 */
export interface AllocationMetric {
  NodesEvaluated: number;
  NodesFiltered: number;
  /** Ready, eligible nodes per datacenter the job may use. */
  NodesAvailable: Record<string, number> | null;
  ClassFiltered: Record<string, number> | null;
  /** Filtered nodes by reason: a constraint (`${node.class} = fast`) or a check ("missing CSI Volume vol1"). */
  ConstraintFiltered: Record<string, number> | null;
  NodesExhausted: number;
  ClassExhausted: Record<string, number> | null;
  DimensionExhausted: Record<string, number> | null;
  QuotaExhausted: string[] | null;
  CoalescedFailures: number;
}

/**
 * One scheduler pass over a job. A pass whose allocs all found a node is "complete"; one that left
 * some unplaced is "complete" too, with FailedTGAllocs and a BlockedEval: a "blocked" eval
 * (TriggeredBy "queued-allocs") that runs again when capacity may have appeared, until it turns
 * "complete" or a later eval "cancelled" it.
 */
export interface Evaluation {
  ID: string;
  Namespace: string;
  Priority: number;
  /** The job's type. */
  Type: string;
  /** "job-register" | "job-deregister" | "node-update" | "node-drain" | "alloc-stop" | "alloc-failure" | "queued-allocs" */
  TriggeredBy: string;
  JobID: string;
  JobModifyIndex: number;
  NodeID: string;
  /** "blocked" | "pending" | "complete" | "failed" | "cancelled" */
  Status: string;
  StatusDescription: string;
  PreviousEval: string;
  NextEval: string;
  BlockedEval: string;
  /** Per task group whose allocs found no node; null (or absent) when none failed. */
  FailedTGAllocs?: Record<string, AllocationMetric> | null;
  QueuedAllocations: Record<string, number> | null;
  SnapshotIndex: number;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  ModifyTime: number;
}

export interface TaskEvent {
  Type: string;
  /** Unix nanoseconds. */
  Time: number;
  DisplayMessage: string;
  Details: Record<string, string>;
}

export interface TaskState {
  /** "pending" | "running" | "dead" */
  State: string;
  Failed: boolean;
  Restarts: number;
  /** ISO timestamps; null until it happens. */
  StartedAt: string | null;
  FinishedAt: string | null;
  Events: TaskEvent[];
}

export interface AllocationListStub {
  ID: string;
  Namespace: string;
  /** `<job>.<group>[<index>]` */
  Name: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  TaskGroup: string;
  /** "run" | "stop" | "evict" */
  DesiredStatus: string;
  DesiredDescription: string;
  /** Migrate is true once a node drain marked the alloc to move; absent from older servers. */
  DesiredTransition?: DesiredTransition;
  /** "pending" | "running" | "complete" | "failed" | "lost" */
  ClientStatus: string;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  ModifyTime: number;
}

export interface DesiredTransition {
  Migrate?: boolean | null;
}

export interface Allocation extends AllocationListStub {
  /** The job version this alloc runs. */
  Job: Job;
}

export interface DriverInfo {
  Detected: boolean;
  Healthy: boolean;
  HealthDescription: string;
  SupportsMounts: boolean;
}

export interface CSITopology {
  Segments: Record<string, string>;
}

export interface CSINodeInfo {
  ID: string;
  MaxVolumes: number;
  AccessibleTopology: CSITopology | null;
  RequiresNodeStageVolume: boolean;
  SupportsStats?: boolean;
  SupportsExpand?: boolean;
  SupportsCondition?: boolean;
}

export interface CSIControllerInfo {
  SupportsCreateDelete: boolean;
  SupportsAttachDetach: boolean;
  SupportsListVolumes: boolean;
  SupportsGetCapacity?: boolean;
  SupportsCreateDeleteSnapshot?: boolean;
  SupportsListSnapshots?: boolean;
  SupportsClone?: boolean;
  SupportsReadOnlyAttach?: boolean;
  SupportsExpand?: boolean;
  SupportsListVolumesAttachedNodes?: boolean;
  SupportsCondition?: boolean;
  SupportsGet?: boolean;
}

/** One plugin instance on one node. */
export interface CSIInfo {
  PluginID: string;
  AllocID: string;
  Healthy: boolean;
  HealthDescription: string;
  /** Unix milliseconds. */
  UpdateTime: number;
  Provider: string;
  ProviderVersion: string;
  RequiresControllerPlugin: boolean;
  RequiresTopologies: boolean;
  ControllerInfo: CSIControllerInfo | null;
  NodeInfo: CSINodeInfo | null;
}

export interface NodeListStub {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass: string;
  /** "initializing" | "ready" | "down" */
  Status: string;
  StatusDescription: string;
  /** "eligible" | "ineligible" */
  SchedulingEligibility: string;
  /** True while the node drains. */
  Drain?: boolean;
  Drivers: Record<string, DriverInfo>;
  LastDrain?: DrainMetadata | null;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface Node extends NodeListStub {
  /** Keyed by plugin ID. */
  CSIControllerPlugins: Record<string, CSIInfo>;
  CSINodePlugins: Record<string, CSIInfo>;
  /** The client config's host volumes, keyed by name; absent on nodes registered before them. */
  HostVolumes?: Record<string, { Name: string; Path: string; ReadOnly: boolean }>;
  Attributes?: Record<string, string>;
  Meta?: Record<string, string>;
  /** Set while the node drains. */
  DrainStrategy?: DrainStrategy | null;
}

/** What `POST /v1/node/:id/drain` asks for; null in the request cancels a drain. */
export interface DrainSpec {
  /** Nanoseconds; 0: no deadline; negative: force (stop everything now). */
  Deadline: number;
  IgnoreSystemJobs: boolean;
}

export interface DrainStrategy extends DrainSpec {
  /** RFC 3339; "0001-01-01T00:00:00Z" when there is no deadline. */
  ForceDeadline: string;
  /** RFC 3339. */
  StartedAt: string;
}

export interface DrainMetadata {
  /** RFC 3339. */
  StartedAt: string;
  UpdatedAt: string;
  /** "draining" | "complete" | "canceled" */
  Status: string;
  Meta: Record<string, string> | null;
}

/** The answer to a drain or eligibility update. */
export interface NodeUpdateResponse {
  NodeModifyIndex: number;
  EvalIDs: string[] | null;
  EvalCreateIndex: number;
  Index: number;
}

export interface VolumeCapability {
  /** "single-node-reader-only" | "single-node-writer" | "multi-node-reader-only" | "multi-node-single-writer" | "multi-node-multi-writer" */
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
  Context: Record<string, string>;
  /** Bytes. */
  Capacity: number;
  RequestedCapacityMin: number;
  RequestedCapacityMax: number;
  SnapshotID: string;
  CloneID: string;
  Topologies: CSITopology[];
  RequestedTopologies: CSITopologyRequest | null;
  ReadClaims: Record<string, CSIVolumeClaim>;
  WriteClaims: Record<string, CSIVolumeClaim>;
  PastClaims: Record<string, CSIVolumeClaim>;
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
  ResourceExhausted: number | null;
  CreateIndex: number;
  ModifyIndex: number;
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
  ResourceExhausted: number | null;
  CreateIndex: number;
  ModifyIndex: number;
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
    | "Context"
    | "RequestedCapacityMin"
    | "RequestedCapacityMax"
    | "SnapshotID"
    | "CloneID"
    | "RequestedTopologies"
  >
>;

export interface CSIPlugin {
  ID: string;
  Provider: string;
  Version: string;
  ControllerRequired: boolean;
  /** Keyed by node ID. */
  Controllers: Record<string, CSIInfo>;
  Nodes: Record<string, CSIInfo>;
  /** Namespace → job ID → the job that runs the plugin's controller / node side. */
  ControllerJobs?: Record<string, Record<string, CSIJobDescription>>;
  NodeJobs?: Record<string, Record<string, CSIJobDescription>>;
  Allocations: AllocationListStub[];
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's JobDescription: a job that runs a plugin and how many of its allocs do. */
export interface CSIJobDescription {
  Namespace: string;
  ID: string;
  Version: number;
  Expected: number;
}

export interface CSIPluginListStub {
  ID: string;
  Provider: string;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  CreateIndex: number;
  ModifyIndex: number;
}

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
