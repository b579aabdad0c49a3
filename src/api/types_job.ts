/**
 * The HTTP API's job shapes: jobs, task groups, tasks and the policies and volume requests they carry.
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

/** "service" | "batch" | "system" */
export type JobType = string;

export interface MountOptions {
  FSType: string;
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
  /** Absent: the job's (or the job type's default); null for system jobs. */
  ReschedulePolicy?: ReschedulePolicy | null;
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
  /** The job-level reschedule block; each group's ReschedulePolicy merges over it. */
  Reschedule?: ReschedulePolicy | null;
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
