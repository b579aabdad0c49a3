/**
 * Nomad's Job.Scale and Job.ScaleStatus (`PUT`/`GET /v1/job/:id/scale`). Scale sets one group's
 * Count as a new job version and evaluates the job (TriggeredBy `job-scaling`); it refuses what
 * Nomad refuses, with Nomad's words: a missing or unknown group, a negative count, a count outside
 * the group's `scaling` block, a system job past 1, and any job whose deployment is still active
 * ("job scaling blocked due to active deployment"). A request without Count records nothing (Nomad
 * stores it as a scaling event; berth keeps no scaling events) and answers EvalID "".
 */
import { isDeploymentActive, type Deployment } from "../../structs/deployment.js";
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import { MAX_GROUP_COUNT } from "../../structs/job_validate.js";
import type { ServerDeps } from "../deps.js";
import { isAllocOfJob } from "../scheduler/plan.js";
import type { StateReader } from "../state/store.js";
import type { JobWriteResponse } from "./job_revert.js";

/** Nomad's ScalingRequest, as read from the body. */
export interface ScaleRequest {
  /** null: no count change (an event only). */
  count: number | null;
  group: string;
  /** When set, the stored job's JobModifyIndex must be this (Nomad's EnforceIndex). */
  enforceIndex?: number;
}

/** Nomad's TaskGroupScaleStatus. */
export interface TaskGroupScaleStatus {
  Desired: number;
  Placed: number;
  Running: number;
  Healthy: number;
  Unhealthy: number;
  Events: null;
}

/** Nomad's JobScaleStatusResponse. */
export interface JobScaleStatusResponse {
  JobID: string;
  Namespace: string;
  JobCreateIndex: number;
  JobModifyIndex: number;
  JobStopped: boolean;
  TaskGroups: Record<string, TaskGroupScaleStatus>;
}

/** Reads a ScalingRequest body: Count (integer or null), Target.Group, EnforceIndex/JobModifyIndex. */
export function scaleRequestOf(body: unknown): ScaleRequest {
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const c = body.Count;
  if (c !== undefined && c !== null && (typeof c !== "number" || !Number.isInteger(c)))
    throw validationError("Count", "must be an integer");
  const target = body.Target ?? {};
  if (!isObject(target)) throw validationError("Target", "must be an object");
  const group = target.Group;
  if (group !== undefined && typeof group !== "string")
    throw validationError("Target.Group", "must be a string");
  if (!group) throw validationError("Target.Group", "missing task group name for scaling action");
  const out: ScaleRequest = { count: typeof c === "number" ? c : null, group };
  if (body.EnforceIndex === true) {
    const idx = body.JobModifyIndex;
    if (typeof idx !== "number" || !Number.isInteger(idx) || idx < 0)
      throw validationError("JobModifyIndex", "must be a non-negative integer");
    out.enforceIndex = idx;
  }
  return out;
}

/** The job's latest deployment (of this incarnation of the job), if any. */
export function latestDeployment(state: StateReader, job: Job): Deployment | undefined {
  return state
    .deploymentsByJob(job.Namespace, job.ID)
    .filter((d) => d.JobCreateIndex === job.CreateIndex)
    .at(-1);
}

function checkCount(job: Job, group: string, count: number): void {
  if (count < 0) throw validationError("Count", "scaling action count can't be negative");
  if (count > MAX_GROUP_COUNT) throw validationError("Count", `must be at most ${MAX_GROUP_COUNT}`);
  if (job.Type === "system" && count > 1)
    throw validationError(
      "Count",
      `Job task group ${group} has count ${count}. Count cannot exceed 1 with system scheduler`,
    );
  const scaling = job.TaskGroups.find((g) => g.Name === group)?.Scaling as
    { Min?: number | null; Max?: number | null } | null | undefined;
  if (typeof scaling?.Max === "number" && count > scaling.Max)
    throw validationError(
      "Count",
      `group count was greater than scaling policy maximum: ${count} > ${scaling.Max}`,
    );
  if (typeof scaling?.Min === "number" && count < scaling.Min)
    throw validationError(
      "Count",
      `group count was less than scaling policy minimum: ${count} < ${scaling.Min}`,
    );
}

export async function scaleJob(
  deps: Pick<ServerDeps, "store" | "scheduler">,
  namespace: string,
  jobId: string,
  req: ScaleRequest,
): Promise<JobWriteResponse> {
  const job = await deps.store.txn((tx) => {
    const cur = tx.getJob(namespace, jobId);
    if (!cur) throw notFound("job", jobId);
    if (!cur.TaskGroups.some((g) => g.Name === req.group))
      throw validationError(
        "Target.Group",
        `task group ${JSON.stringify(req.group)} specified for the job does not exist`,
      );
    if (req.enforceIndex !== undefined && req.enforceIndex !== cur.JobModifyIndex)
      throw new BerthError(
        "ERR_CONFLICT",
        `Enforcing job modify index ${req.enforceIndex}: job exists with conflicting job modify index: ${cur.JobModifyIndex}`,
      );
    if (req.count === null) return null;
    checkCount(cur, req.group, req.count);
    const d = latestDeployment(tx, cur);
    if (d && isDeploymentActive(d))
      throw new BerthError("ERR_VALIDATION", "job scaling blocked due to active deployment", {
        field: "Count",
      });
    const count = req.count;
    return tx.putJob({
      ...cur,
      TaskGroups: cur.TaskGroups.map((g) => (g.Name === req.group ? { ...g, Count: count } : g)),
      Stable: false,
      Version: cur.Version + 1,
      SubmitTime: Date.now() * NS_PER_MS,
      JobModifyIndex: tx.writeIndex,
    });
  });
  if (!job) {
    const index = deps.store.index();
    return { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Warnings: "", Index: index };
  }
  const r = await deps.scheduler.evaluate(job.Namespace, job.ID, "job-scaling");
  return {
    EvalID: r.evalId,
    EvalCreateIndex: Math.max(r.index, job.JobModifyIndex),
    JobModifyIndex: job.JobModifyIndex,
    Warnings: "",
    Index: deps.store.index(),
  };
}

/** Desired counts from the job, placed/healthy/unhealthy from its latest deployment, running from its allocs. */
export function scaleStatus(state: StateReader, namespace: string, jobId: string): JobScaleStatusResponse {
  const job = state.getJob(namespace, jobId);
  if (!job) throw notFound("job", jobId);
  const d = latestDeployment(state, job);
  const allocs = state.allocsByJob(namespace, jobId).filter((a) => isAllocOfJob(a, job));
  const TaskGroups: Record<string, TaskGroupScaleStatus> = {};
  for (const g of job.TaskGroups) {
    const ds = d?.TaskGroups[g.Name];
    TaskGroups[g.Name] = {
      Desired: g.Count,
      Placed: ds?.PlacedAllocs ?? 0,
      Running: allocs.filter((a) => a.TaskGroup === g.Name && a.ClientStatus === "running").length,
      Healthy: ds?.HealthyAllocs ?? 0,
      Unhealthy: ds?.UnhealthyAllocs ?? 0,
      Events: null,
    };
  }
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    JobCreateIndex: job.CreateIndex,
    JobModifyIndex: job.JobModifyIndex,
    JobStopped: job.Stop === true,
    TaskGroups,
  };
}
