/**
 * Nomad's JobSummary (`GET /v1/job/:id/summary`, what `nomad job status` reads): per task group the
 * job's allocs counted by client status (pending ones as Starting) and the allocs its newest
 * evaluation could not place (Queued); for a periodic or parameterized job its children by status
 * (Pending, Running, Dead). Pure: the caller reads the records.
 */
import type { Allocation } from "./alloc.js";
import type { Evaluation } from "./eval.js";
import type { Job } from "./job.js";

export interface TaskGroupSummary {
  Queued: number;
  Complete: number;
  Failed: number;
  Running: number;
  Starting: number;
  Lost: number;
  Unknown: number;
}

export interface JobChildrenSummary {
  Pending: number;
  Running: number;
  Dead: number;
}

export interface JobSummary {
  JobID: string;
  Namespace: string;
  Summary: Record<string, TaskGroupSummary>;
  Children: JobChildrenSummary;
  CreateIndex: number;
  ModifyIndex: number;
}

const BY_STATUS: Record<string, keyof TaskGroupSummary> = {
  pending: "Starting",
  running: "Running",
  complete: "Complete",
  failed: "Failed",
  lost: "Lost",
  unknown: "Unknown",
};

export function jobSummaryOf(
  job: Job,
  allocs: readonly Allocation[],
  evals: readonly Evaluation[],
  children: readonly Job[],
): JobSummary {
  const summary: Record<string, TaskGroupSummary> = {};
  const group = (name: string) =>
    (summary[name] ??= { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 });
  for (const tg of job.TaskGroups) group(tg.Name);
  for (const a of allocs) {
    const field = BY_STATUS[a.ClientStatus];
    if (field) group(a.TaskGroup)[field]++;
  }
  const newest = evals.reduce<Evaluation | undefined>(
    (n, e) => (n === undefined || e.CreateIndex > n.CreateIndex ? e : n),
    undefined,
  );
  for (const [tg, n] of Object.entries(newest?.QueuedAllocations ?? {})) group(tg).Queued = n;
  const kids: JobChildrenSummary = { Pending: 0, Running: 0, Dead: 0 };
  for (const c of children) {
    if (c.Status === "pending") kids.Pending++;
    else if (c.Status === "running") kids.Running++;
    else kids.Dead++;
  }
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    Summary: summary,
    Children: kids,
    CreateIndex: job.CreateIndex,
    ModifyIndex: [...allocs, ...evals].reduce((m, r) => Math.max(m, r.ModifyIndex), job.ModifyIndex),
  };
}
