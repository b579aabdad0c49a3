/**
 * The HTTP API's job shapes: jobs, task groups, tasks and the policies and volume requests they carry.
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

import type { VolumeCreateRequest } from "./types_volume_create.js";

/** "service" | "batch" | "system" | "sysbatch" */
export type JobType = string;

export interface MountOptions {
  FSType: string;
  /** Redacted by the server (`["[REDACTED]"]`) whenever non-empty. */
  MountFlags: string[];
  /** berth's: the group a non-root task writes the volume as, and when it is re-applied. */
  MountGroup?: string;
  MountGroupPolicy?: string;
}

export interface LogConfig {
  MaxFiles?: number;
  MaxFileSizeMB?: number;
  Disabled?: boolean;
  /** Nomad's deprecated form of Disabled (false disables), read only when Disabled is absent. */
  Enabled?: boolean;
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
  Sticky?: boolean;
  /** Create the volume on first placement when it does not exist (types_volume_create.ts). */
  Create?: VolumeCreateRequest;
}

export interface VolumeMount {
  Volume: string;
  Destination: string;
  ReadOnly: boolean;
  /** "private" | "host-to-task" | "bidirectional" */
  PropagationMode: string;
  SELinuxLabel?: string;
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
  RenderTemplates?: boolean;
}

/**
 * Nomad's ReschedulePolicy (durations in nanoseconds). Jobspecs may leave fields out; the server
 * answers with every field of the effective policy.
 */
export interface ReschedulePolicy {
  Attempts?: number;
  Interval?: number;
  Delay?: number;
  /** "constant" | "exponential" | "fibonacci" */
  DelayFunction?: string;
  MaxDelay?: number;
  Unlimited?: boolean;
}

export interface RescheduleEvent {
  /** Unix nanoseconds. */
  RescheduleTime: number;
  PrevAllocID: string;
  PrevNodeID: string;
  /** Nanoseconds. */
  Delay: number;
}

/** A stanza berth keeps as Nomad's JSON object but does not act on (services, networks, vault…). */
export type KeptStanza = Record<string, unknown>;

/** Nomad's Resources: CPU in MHz, memory in MiB; the server fills CPU 100 / MemoryMB 300. */
export interface Resources {
  CPU?: number | null;
  Cores?: number | null;
  MemoryMB?: number | null;
  MemoryMaxMB?: number | null;
  DiskMB?: number | null;
  SecretsMB?: number | null;
  IOPS?: number | null;
  Networks?: KeptStanza[] | null;
  Devices?: KeptStanza[] | null;
  NUMA?: KeptStanza | null;
}

export interface TaskLifecycle {
  /** "prestart" | "poststart" | "poststop" */
  Hook: string;
  Sidecar: boolean;
}

/** Nomad's Template; the server fills Nomad's defaults for fields left out. */
export interface Template {
  SourcePath?: string | null;
  DestPath?: string | null;
  EmbeddedTmpl?: string | null;
  /** "noop" | "restart" | "signal" | "script" */
  ChangeMode?: string | null;
  ChangeScript?: KeptStanza | null;
  ChangeSignal?: string | null;
  Once?: boolean | null;
  /** Nanoseconds. */
  Splay?: number | null;
  Perms?: string | null;
  Uid?: number | null;
  Gid?: number | null;
  LeftDelim?: string | null;
  RightDelim?: string | null;
  Envvars?: boolean | null;
  VaultGrace?: number | null;
  Wait?: KeptStanza | null;
  ErrMissingKey?: boolean | null;
}

/** A placement preference: weight -100..100, not 0 (the server's default 50). */
export interface Affinity {
  LTarget: string;
  RTarget: string;
  Operand: string;
  Weight?: number | null;
}

export interface SpreadTarget {
  Value: string;
  Percent: number;
}

export interface Spread {
  Attribute: string;
  Weight?: number | null;
  SpreadTarget?: SpreadTarget[] | null;
}

/** Nomad's UpdateStrategy (durations in nanoseconds); the server fills Nomad's defaults. */
export interface UpdateStrategy {
  Stagger?: number | null;
  MaxParallel?: number | null;
  /** "checks" | "task_states" | "manual" */
  HealthCheck?: string | null;
  MinHealthyTime?: number | null;
  HealthyDeadline?: number | null;
  ProgressDeadline?: number | null;
  Canary?: number | null;
  AutoRevert?: boolean | null;
  AutoPromote?: boolean | null;
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
  User?: string;
  Lifecycle?: TaskLifecycle | null;
  Affinities?: Affinity[] | null;
  Resources?: Resources | null;
  Meta?: Record<string, string> | null;
  Templates?: Template[] | null;
  /** "" or absent: SIGTERM. */
  KillSignal?: string;
  /** Nanoseconds. */
  ShutdownDelay?: number;
  Leader?: boolean;
  Kind?: string;
  /** Log rotation (Nomad's names); the server fills in its defaults (10 files of 10 MB). */
  LogConfig?: LogConfig | null;
  /** Kept, not acted on (the register answer's Warnings name them). */
  Services?: KeptStanza[] | null;
  Artifacts?: KeptStanza[] | null;
  Vault?: KeptStanza | null;
  Consul?: KeptStanza | null;
  DispatchPayload?: KeptStanza | null;
  ScalingPolicies?: KeptStanza[] | null;
  Secrets?: KeptStanza[] | null;
  Identity?: KeptStanza | null;
  Identities?: KeptStanza[] | null;
  Actions?: KeptStanza[] | null;
  Schedule?: KeptStanza | null;
}

export interface TaskGroup {
  Name: string;
  Count: number;
  Volumes: Record<string, VolumeRequest>;
  Tasks: Task[];
  RestartPolicy: RestartPolicy | null;
  /** Absent: the job's (or the job type's default); null for system jobs. */
  ReschedulePolicy?: ReschedulePolicy | null;
  /** Absent or null: none. */
  Constraints?: Constraint[] | null;
  Affinities?: Affinity[] | null;
  Spreads?: Spread[] | null;
  /** The effective strategy (the job's merged with the group's). */
  Update?: UpdateStrategy | null;
  Meta?: Record<string, string> | null;
  /** Nanoseconds. */
  ShutdownDelay?: number | null;
  /** Kept, not acted on. */
  Networks?: KeptStanza[] | null;
  Services?: KeptStanza[] | null;
  EphemeralDisk?: KeptStanza | null;
  Migrate?: KeptStanza | null;
  Disconnect?: KeptStanza | null;
  Scaling?: KeptStanza | null;
  Consul?: KeptStanza | null;
  MaxRunDuration?: number | null;
  StopAfterClientDisconnect?: number | null;
  MaxClientDisconnect?: number | null;
  PreventRescheduleOnLost?: boolean | null;
}

/** Nomad's placement constraint: `${node.unique.name}` (LTarget) `=` (Operand) `B` (RTarget). */
export interface Constraint {
  LTarget: string;
  RTarget: string;
  /** Nomad's operators: "=", "!=", "<", "regexp", "version", "distinct_hosts", "is_set", … */
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
  /** The job-level reschedule block; each group's ReschedulePolicy merges over it. */
  Reschedule?: ReschedulePolicy | null;
  /** Absent or null: none. */
  Constraints?: Constraint[] | null;
  Affinities?: Affinity[] | null;
  Spreads?: Spread[] | null;
  Update?: UpdateStrategy | null;
  Meta?: Record<string, string> | null;
  Region?: string;
  AllAtOnce?: boolean;
  NodePool?: string;
  /** Nomad's PeriodicConfig as written (the server canonicalizes it). */
  Periodic?: KeptStanza | null;
  /** Nomad's ParameterizedJobConfig as written. */
  ParameterizedJob?: KeptStanza | null;
  /** Set by the server on a launched child: its parent's ID. */
  ParentID?: string;
  Dispatched?: boolean;
  /** A dispatched child's payload, base64. */
  Payload?: string;
  /** Kept, not acted on. */
  Multiregion?: KeptStanza | null;
  Migrate?: KeptStanza | null;
  UI?: KeptStanza | null;
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
  /** A launched child's parent ("" for other jobs). */
  ParentID?: string;
  Periodic?: boolean;
  ParameterizedJob?: boolean;
}

export interface JobRegisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
  /** berth's: an active periodic job's next launch (RFC 3339 in the job's zone). */
  NextPeriodicLaunch?: string;
}

/** Nomad's JobDispatchResponse. */
export interface JobDispatchResponse {
  DispatchedJobID: string;
  EvalID: string;
  EvalCreateIndex: number;
  JobCreateIndex: number;
  Index: number;
}

/** Nomad's PeriodicForceResponse. */
export interface PeriodicForceResponse {
  EvalID: string;
  EvalCreateIndex: number;
  Index: number;
}

export interface JobDeregisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}
