/**
 * Jobs, task groups and tasks in Nomad's JSON shape (PascalCase, durations in nanoseconds), so a
 * Nomad operator's JSON jobspec registers as-is. Validation lives in job_validate.ts.
 */
import type { AccessMode, AttachmentMode, CSIPluginType, MountOptions } from "./csi_terms.js";
import type { Constraint } from "./constraint.js";
import type { LogConfig } from "./log_config.js";
import type {
  Affinity,
  DispatchPayloadConfig,
  KeptStanza,
  ParameterizedJobConfig,
  PeriodicConfig,
  Resources,
  Spread,
  TaskLifecycle,
  Template,
  UpdateStrategy,
} from "./job_stanzas.js";
import type { ReschedulePolicy } from "./reschedule_policy.js";

export type { Constraint } from "./constraint.js";

export type JobType = "service" | "batch" | "system" | "sysbatch";

/**
 * Nomad's system and sysbatch jobs: each group's allocs run on every eligible node (one set per
 * node, server/scheduler/system_plan.ts), not `Count` allocs placed somewhere.
 */
export function runsOnEveryNode(type: JobType): boolean {
  return type === "system" || type === "sysbatch";
}

/** Jobs whose tasks run to completion (Nomad's batch and sysbatch): a task that exits 0 is done. */
export function runsToCompletion(type: JobType): boolean {
  return type === "batch" || type === "sysbatch";
}
export type JobStatus = "pending" | "running" | "dead";

export interface VolumeRequest {
  Name: string;
  Type: "csi" | "host";
  Source: string;
  ReadOnly: boolean;
  AccessMode: AccessMode | "";
  AttachmentMode: AttachmentMode | "";
  /** Replaces the volume's own mount options when set. */
  MountOptions: MountOptions | null;
  /** Claim `Source[N]` for the alloc with index N. */
  PerAlloc: boolean;
  /** Nomad's sticky host volumes; kept (set only when true), not honoured. */
  Sticky?: boolean;
  /**
   * berth's volumes from the jobspec (issue 33): when set (csi only), the volume `Source` (or each
   * `Source[N]` with PerAlloc) is created on first placement if it does not exist. Set only when
   * written. See job_volume_create.ts.
   */
  Create?: VolumeCreateSpec;
}

/**
 * What `volume create` needs, in the volume's own field names (CSIVolume), from a group volume's
 * `create` block. No Secrets: refused (a job is stored and answered without sealing).
 */
export interface VolumeCreateSpec {
  PluginID: string;
  // Structurally volume.ts's VolumeCapability and TopologyRequest (volume.ts imports job.ts).
  RequestedCapabilities: { AccessMode: AccessMode; AttachmentMode: AttachmentMode }[];
  RequestedCapacityMin: number;
  RequestedCapacityMax: number;
  Parameters: Record<string, string>;
  RequestedTopologies: {
    Required: { Segments: Record<string, string> }[] | null;
    Preferred: { Segments: Record<string, string> }[] | null;
  } | null;
  SnapshotID: string;
  CloneID: string;
  /** What a purge of the job does to the volumes it created (volume.ts's VolumeOnPurge). */
  OnPurge: "delete" | "retain";
}

export interface VolumeMount {
  Volume: string;
  Destination: string;
  ReadOnly: boolean;
  PropagationMode: "private" | "host-to-task" | "bidirectional";
  /** Kept (set only when non-empty), not honoured. */
  SELinuxLabel?: string;
}

export interface TaskCSIPluginConfig {
  ID: string;
  Type: CSIPluginType;
  /** Where the plugin's directory (socket, staging, publish targets) appears inside the task. */
  MountDir: string;
  /** Base of the paths handed to the plugin for staging/publishing; MountDir when empty. */
  StagePublishBaseDir: string;
  /** Nanoseconds the plugin may take to become healthy before the task is restarted. */
  HealthTimeout: number;
}

export interface RestartPolicy {
  Attempts: number;
  /** Nanoseconds. */
  Interval: number;
  Delay: number;
  Mode: "fail" | "delay";
  /** Nomad's `render_templates`; set only when true. */
  RenderTemplates?: boolean;
}

export interface Task {
  Name: string;
  Driver: string;
  Config: Record<string, unknown>;
  Env: Record<string, string>;
  VolumeMounts: VolumeMount[];
  CSIPluginConfig: TaskCSIPluginConfig | null;
  /** Nanoseconds between SIGTERM and SIGKILL. */
  KillTimeout: number;
  RestartPolicy: RestartPolicy | null;
  /**
   * Placement constraints (constraint.ts). validateJob always sets them; absent means none, so
   * records and alloc snapshots stored before constraints existed still read correctly.
   */
  Constraints?: Constraint[];
  /*
   * The stanzas below (job_stanzas.ts) are optional for the same reason: records stored before
   * they existed read as "not set".
   */
  /** Absent: Nomad's defaults (DEFAULT_TASK_CPU_MHZ, DEFAULT_TASK_MEMORY_MB). */
  Resources?: Resources | null;
  /** Absent or null: a main task. */
  Lifecycle?: TaskLifecycle | null;
  Templates?: Template[];
  /** The signal sent first on stop ("SIGINT", …); "" or absent: SIGTERM. */
  KillSignal?: string;
  /** The user the task runs as; "" or absent: the driver's default. */
  User?: string;
  Meta?: Record<string, string>;
  Affinities?: Affinity[];
  /** Nanoseconds to wait between deregistering services and killing the task. */
  ShutdownDelay?: number;
  /** Kept, not honoured (see KeptStanza). */
  Services?: KeptStanza[];
  Vault?: KeptStanza | null;
  Artifacts?: KeptStanza[];
  /** The task's log rotation (log_config.ts); absent or null: Nomad's defaults. */
  LogConfig?: LogConfig | null;
  Leader?: boolean;
  Consul?: KeptStanza | null;
  /** Where a dispatched job's payload is written, under the task's `local/` dir. */
  DispatchPayload?: DispatchPayloadConfig | null;
  /** "" for a task written in a jobspec (Nomad sets it for Connect tasks). */
  Kind?: string;
  ScalingPolicies?: KeptStanza[];
  Secrets?: KeptStanza[];
  Identity?: KeptStanza | null;
  Identities?: KeptStanza[];
  Actions?: KeptStanza[];
  Schedule?: KeptStanza | null;
}

export interface TaskGroup {
  Name: string;
  Count: number;
  Volumes: Record<string, VolumeRequest>;
  Tasks: Task[];
  RestartPolicy: RestartPolicy | null;
  /**
   * The effective policy (job-type defaults, then the job's `Reschedule`, then the group's);
   * null for system jobs. Absent on groups stored before reschedule policies: never rescheduled.
   */
  ReschedulePolicy?: ReschedulePolicy | null;
  /** As Task.Constraints. */
  Constraints?: Constraint[];
  Affinities?: Affinity[];
  Spreads?: Spread[];
  /** The effective strategy (the job's merged with the group's); absent or null: none. */
  Update?: UpdateStrategy | null;
  Meta?: Record<string, string>;
  ShutdownDelay?: number;
  /** Kept, not honoured (see KeptStanza). */
  Networks?: KeptStanza[];
  Services?: KeptStanza[];
  EphemeralDisk?: KeptStanza | null;
  Migrate?: KeptStanza | null;
  Disconnect?: KeptStanza | null;
  Scaling?: KeptStanza | null;
  Consul?: KeptStanza | null;
  /** Nanoseconds; kept, not honoured (Nomad's deprecated disconnect fields and max_run_duration). */
  MaxRunDuration?: number | null;
  StopAfterClientDisconnect?: number | null;
  MaxClientDisconnect?: number | null;
  PreventRescheduleOnLost?: boolean;
}

export interface Job {
  ID: string;
  Name: string;
  Namespace: string;
  Type: JobType;
  Datacenters: string[];
  Priority: number;
  Stop: boolean;
  Status: JobStatus;
  TaskGroups: TaskGroup[];
  /** The job-level `reschedule` block as written; validateJob merges it into each group's. */
  Reschedule?: ReschedulePolicy | null;
  /** As Task.Constraints. */
  Constraints?: Constraint[];
  Affinities?: Affinity[];
  Spreads?: Spread[];
  /** The job-level `update` block as written; each group's Update merges over it. */
  Update?: UpdateStrategy | null;
  Meta?: Record<string, string>;
  Region?: string;
  AllAtOnce?: boolean;
  /** A periodic job's launch schedule (periodic.ts): the leader launches a child per tick. */
  Periodic?: PeriodicConfig | null;
  /** A parameterized job (parameterized.ts): children are made by dispatch only. */
  ParameterizedJob?: ParameterizedJobConfig | null;
  /** A launched child's parent (a periodic or parameterized job); absent for other jobs. */
  ParentID?: string;
  /** Set on a dispatched child (Nomad's Dispatched). */
  Dispatched?: boolean;
  /** The token a dispatched child was made with: a dispatch repeating it gets this child. */
  DispatchIdempotencyToken?: string;
  /** A dispatched child's payload, base64 (as Nomad's API carries it); absent when none. */
  Payload?: string;
  /** Kept, not honoured (see KeptStanza). */
  Multiregion?: KeptStanza | null;
  Migrate?: KeptStanza | null;
  UI?: KeptStanza | null;
  /** Nomad's node pool ("default" when unset); berth has one pool and stores what was asked. */
  NodePool?: string;
  Version: number;
  /** Set once a deployment of this version succeeded (Nomad's Stable); absent: not stable. */
  Stable?: boolean;
  /** Unix nanoseconds. */
  SubmitTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
}

export const NS_PER_MS = 1_000_000;
export const NS_PER_S = 1_000_000_000;

/** The volume ID an alloc claims for a request: `Source[N]` when per_alloc. */
export function volumeSourceForAlloc(req: VolumeRequest, allocIndex: number): string {
  return req.PerAlloc ? `${req.Source}[${allocIndex}]` : req.Source;
}

/** The claim mode a request makes. */
export function claimModeOf(req: VolumeRequest): "read" | "write" {
  return req.ReadOnly ? "read" : "write";
}
