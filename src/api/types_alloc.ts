/**
 * The HTTP API's allocation and evaluation shapes: allocs, their task states and events, placement metrics.
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

import type { Job, RescheduleEvent } from "./types_job.js";

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
  /** "job-register" | "job-deregister" | "job-scaling" | "node-update" | "node-drain" | "alloc-stop" | "alloc-failure" | "queued-allocs" | "deployment-watcher" | "periodic-job" | "reconnect" (a delayed reschedule: "alloc-failure", pending, with WaitUntil) */
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
  /** RFC 3339; "0001-01-01T00:00:00Z" unless the eval is a delayed follow-up. */
  WaitUntil?: string;
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
  /** On a replacement: the reschedules that led to it. Absent from older servers. */
  RescheduleTracker?: { Events: RescheduleEvent[] | null } | null;
  /** On a failed alloc: the delayed eval that will replace it ("" when none). */
  FollowupEvalID?: string;
  /** On a failed alloc: the alloc that replaced it. */
  NextAllocation?: string;
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
  /** On a replacement: the failed alloc it replaces (the full answer only, as Nomad's). */
  PreviousAllocation?: string;
}

/** `GET /v1/client/allocation/:id/stats` (Nomad's api.AllocResourceUsage). */
export interface AllocResourceUsage {
  ResourceUsage: ResourceUsage;
  Tasks: Record<
    string,
    { ResourceUsage: ResourceUsage; Timestamp: number; Pids: Record<string, ResourceUsage> }
  >;
  Timestamp: number;
}
export interface ResourceUsage {
  MemoryStats: {
    RSS: number;
    Cache: number;
    Swap: number;
    Usage: number;
    MaxUsage: number;
    KernelUsage: number;
    KernelMaxUsage: number;
    Measured: string[];
  };
  CpuStats: {
    SystemMode: number;
    UserMode: number;
    TotalTicks: number;
    ThrottledPeriods: number;
    ThrottledTime: number;
    Percent: number;
    Measured: string[];
  };
  DeviceStats: unknown[];
}
