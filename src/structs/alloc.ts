/** Allocations: one placement of a task group on a node, in Nomad's JSON shape. */
import type { Job } from "./job.js";
import type { RescheduleTracker } from "./reschedule_policy.js";

export type DesiredStatus = "run" | "stop" | "evict";
/**
 * `unknown`: the server's, never a node's — the alloc's node is disconnected and its group has a
 * `lost_after` window (structs/disconnect.ts); it is still desired to run and keeps its claims.
 */
export type ClientStatus = "pending" | "running" | "complete" | "failed" | "lost" | "unknown";

/** Nomad's AllocState: one transition of a field (ClientStatus), with its time (RFC 3339). */
export interface AllocState {
  Field: string;
  Value: string;
  Time: string;
}

export interface TaskEvent {
  Type: string;
  /** Unix nanoseconds. */
  Time: number;
  DisplayMessage: string;
  Details: Record<string, string>;
}

export interface TaskState {
  State: "pending" | "running" | "dead";
  Failed: boolean;
  Restarts: number;
  /** ISO timestamps, as Nomad's API gives them; null until it happens. */
  StartedAt: string | null;
  FinishedAt: string | null;
  Events: TaskEvent[];
}

/**
 * Nomad's DesiredTransition: a change the server wants the scheduler to make to a running alloc.
 * Migrate (set by the node drainer) makes the reconciler stop the alloc and place its replacement on
 * another node.
 */
export interface DesiredTransition {
  Migrate?: boolean;
}

/**
 * Nomad's reschedule links (structs/reschedule.ts). All optional: allocs stored before reschedule
 * policies existed read as never rescheduled.
 */
export interface RescheduleFields {
  /** On a replacement: the reschedules that led to it. */
  RescheduleTracker?: RescheduleTracker | null;
  /** On a replacement: the failed alloc it replaces. */
  PreviousAllocation?: string;
  /** On a failed alloc: the alloc that replaced it. */
  NextAllocation?: string;
  /** On a failed alloc: the delayed eval that will replace it. */
  FollowupEvalID?: string;
}

export interface Allocation extends RescheduleFields {
  ID: string;
  Namespace: string;
  /** `<job>.<group>[<index>]` */
  Name: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  /** The job version this alloc runs, as a snapshot. */
  Job: Job;
  TaskGroup: string;
  DesiredStatus: DesiredStatus;
  DesiredDescription: string;
  /** Absent on allocs nothing asked to move. */
  DesiredTransition?: DesiredTransition;
  ClientStatus: ClientStatus;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  /** The alloc's disconnect history (unknown, then back); absent on allocs never disconnected. */
  AllocStates?: AllocState[];
  /**
   * Server-only: the order of the node report last applied to this alloc (structs/node_report.ts),
   * so a status report that waited in a hung server's socket cannot roll the alloc back.
   */
  ReportOrder?: [epoch: number, seq: number];
  /**
   * What the scheduler set aside for the alloc on its node (Nomad's AllocatedResources). Absent on
   * allocs placed before resources existed: they count as nothing.
   */
  AllocatedResources?: AllocatedResources;
  /** Set on a canary of a deployment (Nomad's DeploymentID / DeploymentStatus); absent otherwise. */
  DeploymentID?: string;
  DeploymentStatus?: { Healthy: boolean | null; Canary: boolean; Timestamp: string } | null;
  CreateIndex: number;
  ModifyIndex: number;
  AllocModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  ModifyTime: number;
}

/** Nomad's AllocatedResources, the parts berth fills. */
export interface AllocatedResources {
  Tasks: Record<string, AllocatedTaskResources>;
  Shared: { DiskMB: number };
}

export interface AllocatedTaskResources {
  Cpu: { CpuShares: number; ReservedCores: number[] | null };
  Memory: { MemoryMB: number; MemoryMaxMB: number };
}

export function allocIndex(alloc: Pick<Allocation, "Name">): number {
  const m = /\[(\d+)\]$/.exec(alloc.Name);
  return m ? Number(m[1]) : 0;
}

export function isClientTerminal(s: ClientStatus): boolean {
  return s === "complete" || s === "failed" || s === "lost";
}

/** Terminal when the client says it is done, or the server wants it stopped and it never ran. */
export function isAllocTerminal(a: Pick<Allocation, "ClientStatus" | "DesiredStatus">): boolean {
  return isClientTerminal(a.ClientStatus) || (a.DesiredStatus !== "run" && a.ClientStatus === "pending");
}

/** The alloc's task group from its job snapshot. */
export function allocTaskGroup(alloc: Allocation) {
  return alloc.Job.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
}

export function shouldMigrate(a: Pick<Allocation, "DesiredTransition">): boolean {
  return a.DesiredTransition?.Migrate === true;
}
