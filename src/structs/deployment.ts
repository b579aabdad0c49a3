/**
 * Deployments (Nomad's structs.Deployment / DeploymentState): the record of rolling one job version
 * out under its groups' `update` strategies. The scheduler creates one when a job version with an
 * update strategy has allocs to place or replace; the deployment watcher marks the health of its
 * allocs, promotes canaries, and ends it successful or failed. Pure.
 */
import type { Allocation, TaskState } from "./alloc.js";
import type { Job, TaskGroup, VolumeRequest } from "./job.js";
import type { UpdateStrategy } from "./job_stanzas.js";

export type DeploymentStatusValue = "running" | "paused" | "failed" | "successful" | "cancelled";

/** Nomad's StatusDescription texts (nomad/structs/deployment.go). */
export const DEPLOYMENT_DESC = {
  running: "Deployment is running",
  needsPromotion: "Deployment is running but requires manual promotion",
  autoPromotion: "Deployment is running pending automatic promotion",
  paused: "Deployment is paused",
  successful: "Deployment completed successfully",
  stoppedJob: "Cancelled because job is stopped",
  newerJob: "Cancelled due to newer version of job",
  failedAllocations: "Failed due to unhealthy allocations",
  progressDeadline: "Failed due to progress deadline",
  failedByUser: "Deployment marked as failed",
} as const;

/** Nomad's rollback suffixes of a failed deployment's description. */
export function rollbackDescription(base: string, version: number | null): string {
  return version === null
    ? `${base} - no stable job version to auto revert to`
    : `${base} - rolling back to job version ${version}`;
}

/** One task group's progress in a deployment, Nomad's JSON shape. */
export interface DeploymentState {
  /** IDs of the canaries placed for this deployment. */
  PlacedCanaries: string[];
  AutoRevert: boolean;
  AutoPromote: boolean;
  /** Nanoseconds. */
  ProgressDeadline: number;
  /** RFC 3339; "0001-01-01T00:00:00Z" until the first alloc is placed. */
  RequireProgressBy: string;
  Promoted: boolean;
  DesiredCanaries: number;
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
}

export interface Deployment {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  JobModifyIndex: number;
  JobSpecModifyIndex: number;
  JobCreateIndex: number;
  IsMultiregion: boolean;
  TaskGroups: Record<string, DeploymentState>;
  Status: DeploymentStatusValue;
  StatusDescription: string;
  EvalPriority: number;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  ModifyTime: number;
}

export const ZERO_TIME = "0001-01-01T00:00:00Z";

/** A strategy the scheduler acts on: absent, null or MaxParallel 0 means none (all at once). */
export function activeStrategy(g: Pick<TaskGroup, "Update">): UpdateStrategy | null {
  const u = g.Update;
  return u && u.MaxParallel > 0 ? u : null;
}

/** Running or paused: still rolling out (Nomad's Deployment.Active). */
export function isDeploymentActive(d: Pick<Deployment, "Status">): boolean {
  return d.Status === "running" || d.Status === "paused";
}

export function newDeployment(
  id: string,
  job: Job,
  groups: Record<string, { total: number; canaries: number; update: UpdateStrategy }>,
  nowNs: number,
): Deployment {
  const TaskGroups: Record<string, DeploymentState> = {};
  for (const [name, g] of Object.entries(groups)) {
    TaskGroups[name] = {
      PlacedCanaries: [],
      AutoRevert: g.update.AutoRevert,
      AutoPromote: g.update.AutoPromote,
      ProgressDeadline: g.update.ProgressDeadline,
      RequireProgressBy: ZERO_TIME,
      Promoted: false,
      DesiredCanaries: g.canaries,
      DesiredTotal: g.total,
      PlacedAllocs: 0,
      HealthyAllocs: 0,
      UnhealthyAllocs: 0,
    };
  }
  const anyCanary = Object.values(groups).some((g) => g.canaries > 0);
  const allAuto = Object.values(groups).every((g) => g.canaries === 0 || g.update.AutoPromote);
  return {
    ID: id,
    Namespace: job.Namespace,
    JobID: job.ID,
    JobVersion: job.Version,
    JobModifyIndex: job.ModifyIndex,
    JobSpecModifyIndex: job.JobModifyIndex,
    JobCreateIndex: job.CreateIndex,
    IsMultiregion: false,
    TaskGroups,
    Status: "running",
    StatusDescription: !anyCanary
      ? DEPLOYMENT_DESC.running
      : allAuto
        ? DEPLOYMENT_DESC.autoPromotion
        : DEPLOYMENT_DESC.needsPromotion,
    EvalPriority: job.Priority,
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: nowNs,
    ModifyTime: nowNs,
  };
}

/** Whether a group still waits for its canaries to be promoted. */
export function awaitsPromotion(s: DeploymentState): boolean {
  return s.DesiredCanaries > 0 && !s.Promoted;
}

/** The access modes that admit one writer only (CSI's, and Nomad's host volume modes). */
const SINGLE_WRITER_MODES = new Set([
  "single-node-writer",
  "single-node-single-writer",
  "multi-node-single-writer",
]);

/**
 * A request whose volume admits one writer and that writes: its old alloc must let go of the
 * volume before a replacement can claim it (Nomad #13380). `volumeMode` is the volume's own mode,
 * used when the request names none.
 */
export function isSingleWriterRequest(req: VolumeRequest, volumeMode = ""): boolean {
  if (req.ReadOnly) return false;
  return SINGLE_WRITER_MODES.has(req.AccessMode || volumeMode);
}

/** Nomad's AllocDeploymentStatus health: null until decided. */
export function allocHealth(a: Pick<Allocation, "DeploymentStatus">): boolean | null {
  return a.DeploymentStatus?.Healthy ?? null;
}

export function isCanary(a: Pick<Allocation, "DeploymentStatus">): boolean {
  return a.DeploymentStatus?.Canary === true;
}

/**
 * An alloc's health for its deployment, judged from its task states (berth has no service checks,
 * so HealthCheck "checks" is judged as "task_states"; "manual" is left to the API): unhealthy when
 * the alloc failed or a task failed, or it was not healthy within HealthyDeadline; healthy once
 * every task has run for MinHealthyTime. Answers the decision, or the time (unix ms) to look again.
 */
export function judgeHealth(
  a: Pick<Allocation, "ClientStatus" | "TaskStates" | "CreateTime">,
  u: UpdateStrategy,
  nowMs: number,
): { healthy: boolean } | { recheckAtMs: number } | null {
  if (u.HealthCheck === "manual") return null;
  if (a.ClientStatus === "failed" || a.ClientStatus === "lost") return { healthy: false };
  const states: TaskState[] = Object.values(a.TaskStates);
  if (states.some((t) => t.Failed)) return { healthy: false };
  const deadlineMs = a.CreateTime / 1e6 + u.HealthyDeadline / 1e6;
  const pastDeadline = u.HealthyDeadline > 0 && nowMs >= deadlineMs;
  // A finished prestart task (dead, not failed) does not keep the others from being healthy.
  const settled = states.every((t) => t.State === "running" || (t.State === "dead" && !t.Failed));
  const running = states.filter((t) => t.State === "running");
  if (a.ClientStatus === "running" && running.length > 0 && settled) {
    const started = Math.max(...running.map((t) => (t.StartedAt ? Date.parse(t.StartedAt) : nowMs)));
    const healthyAt = started + u.MinHealthyTime / 1e6;
    if (nowMs >= healthyAt) return { healthy: true };
    if (pastDeadline) return { healthy: false };
    return { recheckAtMs: u.HealthyDeadline > 0 ? Math.min(healthyAt, deadlineMs) : healthyAt };
  }
  if (pastDeadline) return { healthy: false };
  return { recheckAtMs: u.HealthyDeadline > 0 ? deadlineMs : nowMs + 1000 };
}
