/**
 * Nomad's JobPlanRequest/JobPlanResponse (`PUT /v1/job/:id/plan`) and the job diff it carries, and
 * JobVersionsResponse (`GET /v1/job/:id/versions`). Part of the API's own DTOs (see types.ts).
 */
import type { AllocationListStub, AllocationMetric, Evaluation } from "./types_alloc.js";
import type { Job } from "./types_job.js";
import type { PlannedVolumeCreate } from "./types_volume_create.js";

export interface FieldDiff {
  /** "Added" | "Deleted" | "Edited" | "None" */
  Type: string;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: string;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff {
  Type: string;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: string;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  /** "create" | "destroy" | "in-place update" | "create/destroy update" | "ignore" | "migrate" | "canary" → count */
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: string;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

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

export interface JobPlanResponse {
  JobModifyIndex: number;
  CreatedEvals: Evaluation[] | null;
  Diff: JobDiff | null;
  Annotations: {
    DesiredTGUpdates: Record<string, DesiredUpdates> | null;
    PreemptedAllocs: AllocationListStub[] | null;
  } | null;
  FailedTGAllocs: Record<string, AllocationMetric> | null;
  /** RFC 3339. */
  NextPeriodicLaunch: string;
  Warnings: string;
  /** berth: the volumes the job's `volume { create { … } }` blocks would create (null: none). */
  CreatedVolumes?: PlannedVolumeCreate[] | null;
  Index: number;
}

export interface JobVersionsResponse {
  /** Newest first; `Stable` set on versions whose deployment succeeded. */
  Versions: (Job & { Stable?: boolean })[];
  Diffs: JobDiff[] | null;
  Index: number;
}
