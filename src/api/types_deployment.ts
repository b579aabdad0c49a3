/**
 * The HTTP API's deployment shape (Nomad's api.Deployment), the fields berth's clients read. Part
 * of the API's own DTOs (see types.ts); same conventions.
 */
export interface DeploymentState {
  AutoRevert: boolean;
  AutoPromote: boolean;
  Promoted: boolean;
  DesiredCanaries: number;
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
  PlacedCanaries: string[] | null;
}

export interface Deployment {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  /** "running" | "paused" | "failed" | "successful" | "cancelled" | "blocked" … */
  Status: string;
  StatusDescription: string;
  TaskGroups: Record<string, DeploymentState> | null;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds of the last change. */
  ModifyTime?: number;
}

/** Nomad's TaskGroupScaleStatus (`GET /v1/job/:id/scale`). */
export interface TaskGroupScaleStatus {
  Desired: number;
  Placed: number;
  Running: number;
  Healthy: number;
  Unhealthy: number;
  Events: unknown[] | null;
}

/** Nomad's JobScaleStatusResponse. */
export interface JobScaleStatus {
  JobID: string;
  Namespace: string;
  JobCreateIndex: number;
  JobModifyIndex: number;
  JobStopped: boolean;
  TaskGroups: Record<string, TaskGroupScaleStatus>;
}
