/** A job's status, recomputed from its allocs and live evals after a pass or an alloc update. */
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { isEvalLive } from "../../structs/eval.js";
import type { Job } from "../../structs/job.js";
import type { StateWriter } from "../state/store.js";
import { isAllocOfJob, jobStatus } from "./plan.js";

/**
 * Recomputes and stores the job's status from its current incarnation's allocs and its live evals
 * (a no-op write when unchanged). `known`: allocs the caller holds as they are in `tx` now; when
 * one of them is a live alloc of this incarnation the job is running (jobStatus's first rule), and
 * the job's allocs are not read — a status update or a batch of placements on a big job stays
 * O(1) in the job's size. Otherwise the store's live-alloc index answers the same question
 * (hasLiveAllocOfJob), and only a job with no live alloc left has its allocs read.
 */
export function refreshJobStatus(tx: StateWriter, job: Job, known: readonly Allocation[] = []): void {
  const liveKnown = known.some(
    (a) => a.JobID === job.ID && a.Namespace === job.Namespace && isAllocOfJob(a, job) && !isAllocTerminal(a),
  );
  if (liveKnown || tx.hasLiveAllocOfJob(job.Namespace, job.ID, job.CreateIndex)) {
    if (job.Status !== "running") tx.putJob({ ...job, Status: "running" });
    return;
  }
  const allocs = tx.allocsByJob(job.Namespace, job.ID).filter((a) => isAllocOfJob(a, job));
  const live = tx.evalsByJob(job.Namespace, job.ID).some(isEvalLive);
  const status = jobStatus(job, allocs, live);
  if (status !== job.Status) tx.putJob({ ...job, Status: status });
}
