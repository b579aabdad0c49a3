/** The job part of a garbage-collection pass (decide.ts jobCollectable says which jobs may go). */
import type { StateWriter } from "../state/store.js";
import { holdsClaim } from "./claims.js";
import { jobCollectable } from "./decide.js";

/** Removes the collectable jobs (and their periodic launch record); their `namespace/id`s. */
export function collectJobsIn(tx: StateWriter, nowMs: number, thresholdMs: number): string[] {
  const out: string[] = [];
  for (const job of tx.listJobs()) {
    if (job.Status !== "dead") continue;
    const allocs = tx
      .allocsByJob(job.Namespace, job.ID)
      .filter((a) => a.Job.CreateIndex === job.CreateIndex)
      .map((alloc) => ({ alloc, holdsClaim: holdsClaim(tx, alloc) }));
    const evals = tx.evalsByJob(job.Namespace, job.ID);
    if (!jobCollectable(job, allocs, evals, nowMs, thresholdMs)) continue;
    tx.deleteJob(job.Namespace, job.ID);
    tx.deletePeriodicLaunch(job.Namespace, job.ID);
    out.push(`${job.Namespace}/${job.ID}`);
  }
  return out;
}
