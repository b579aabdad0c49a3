/**
 * The HTTP API's update shapes: Nomad's JobPlanResponse (job plan), JobVersionsResponse (job
 * history) and DeploymentUpdateResponse (deployment promote/fail/allocation-health). Part of the
 * API's own DTOs (see types.ts); same conventions.
 */
import type { Job } from "./types_job.js";

/** What a scheduler pass would do to one group. */
export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
}

export interface FieldDiff {
  /** "Added" | "Deleted" | "Edited" | "None" */
  Type: string;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface TaskDiff {
  Type: string;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: unknown[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: string;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: unknown[] | null;
  Tasks: TaskDiff[] | null;
  /** Counts by Nomad's words: "create", "destroy", "create/destroy update", "canary", "ignore", … */
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: string;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: unknown[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

export interface JobPlanResponse {
  Annotations: { DesiredTGUpdates: Record<string, DesiredUpdates>; PreemptedAllocs: unknown[] | null };
  /** Groups that would find no node, with the first alloc's AllocMetric. */
  FailedTGAllocs: Record<string, unknown> | null;
  JobModifyIndex: number;
  CreatedEvals: unknown[] | null;
  Diff: JobDiff | null;
  NextPeriodicLaunch: string;
  /** Nomad's multi-warning text ("1 warning:\n\n* …"), "" when none. */
  Warnings: string;
  Index: number;
}

export interface JobVersionsResponse {
  /** Newest first; `Stable` set on versions whose deployment succeeded. */
  Versions: (Job & { Stable?: boolean })[];
  Diffs: JobDiff[] | null;
  Index: number;
}

export interface DeploymentUpdateResponse {
  EvalID: string;
  EvalCreateIndex: number;
  DeploymentModifyIndex: number;
  RevertedJobVersion: number | null;
  Index: number;
}
