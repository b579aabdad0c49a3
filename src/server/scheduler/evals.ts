/**
 * Records a scheduler pass as Nomad Evaluations (the status rules are in structs/eval.ts), inside
 * the pass's own write transaction, and keeps each job's history bounded (EVALS_KEPT_PER_JOB).
 */
import {
  blockedDuplicateDescription,
  blockedEvalFor,
  blockedUnneededDescription,
  evalsToPrune,
  newEval,
  type AllocMetric,
  type EvalTrigger,
  type Evaluation,
} from "../../structs/eval.js";
import { newUuid } from "../../structs/ids.js";
import type { Job } from "../../structs/job.js";
import type { StateWriter } from "../state/store.js";
import type { PlacementFailure } from "./plan.js";

/** What a pass did, as the eval records it. */
export interface PassOutcome {
  /** IDs of the allocs the pass placed. */
  placed: string[];
  stopped: number;
  failures: PlacementFailure[];
}

export interface Recorded {
  /** The eval that stands for this pass ("" when none was recorded). */
  evalId: string;
  /** The job's blocked eval after this pass ("" when nothing waits for a node). */
  blockedEvalId: string;
}

export function failedTGAllocs(failures: PlacementFailure[]): Record<string, AllocMetric> | null {
  return failures.length === 0 ? null : Object.fromEntries(failures.map((f) => [f.group, f.metrics]));
}

/** Every group of the job, with how many of its allocs still wait for a node. */
export function queuedAllocations(job: Pick<Job, "TaskGroups">, failures: PlacementFailure[]) {
  const out: Record<string, number> = {};
  for (const g of job.TaskGroups) out[g.Name] = 0;
  for (const f of failures) out[f.group] = f.missing;
  return out;
}

/**
 * Records the pass over `job`. A `queued-allocs` pass over a job with a blocked eval is that blocked
 * eval's own run: it is reblocked (FailedTGAllocs refreshed, written only when they changed) or
 * completed, and no new eval is made. Any other pass makes a complete eval, plus a blocked one
 * when allocs found no node; older blocked evals of the job are cancelled either way. With
 * `quiet`, a pass that placed, stopped and failed nothing records nothing.
 */
export function recordPass(
  tx: StateWriter,
  job: Job,
  out: PassOutcome,
  trigger: EvalTrigger,
  nowNs: number,
  quiet = false,
): Recorded {
  const blocked = tx.evalsByJob(job.Namespace, job.ID).filter((e) => e.Status === "blocked");
  const failed = failedTGAllocs(out.failures);
  const queued = queuedAllocations(job, out.failures);
  const current = blocked.at(-1);
  if (trigger === "queued-allocs" && current) {
    for (const b of blocked.slice(0, -1)) cancel(tx, b, blockedDuplicateDescription(job.ID), nowNs);
    const PlacedAllocIDs = [...current.PlacedAllocIDs, ...out.placed];
    const snapshot = { SnapshotIndex: tx.index(), PlacedAllocIDs, ModifyTime: nowNs };
    if (failed) {
      const changed =
        out.placed.length > 0 ||
        !sameJson(current.FailedTGAllocs, failed) ||
        !sameJson(current.QueuedAllocations, queued);
      if (changed) tx.putEval({ ...current, ...snapshot, FailedTGAllocs: failed, QueuedAllocations: queued });
      return { evalId: current.ID, blockedEvalId: current.ID };
    }
    tx.putEval({
      ...current,
      ...snapshot,
      Status: "complete",
      StatusDescription: "",
      FailedTGAllocs: null,
      QueuedAllocations: queued,
    });
    return { evalId: current.ID, blockedEvalId: "" };
  }
  if (quiet && !failed && out.placed.length + out.stopped === 0) return { evalId: "", blockedEvalId: "" };
  const ev: Evaluation = {
    ...newEval(job, newUuid(), trigger, nowNs, tx.index()),
    FailedTGAllocs: failed,
    QueuedAllocations: queued,
    PlacedAllocIDs: out.placed,
  };
  const next = failed ? blockedEvalFor(ev, newUuid()) : undefined;
  if (next) ev.BlockedEval = next.ID;
  for (const b of blocked) {
    cancel(tx, b, next ? blockedDuplicateDescription(job.ID) : blockedUnneededDescription(ev.ID), nowNs);
  }
  tx.putEval(ev);
  if (next) tx.putEval(next);
  for (const id of evalsToPrune(tx.evalsByJob(job.Namespace, job.ID))) tx.deleteEval(id);
  return { evalId: ev.ID, blockedEvalId: next?.ID ?? "" };
}

/** Cancels the blocked evals of a job that is gone. */
export function cancelBlocked(tx: StateWriter, namespace: string, jobId: string, nowNs: number): void {
  for (const e of tx.evalsByJob(namespace, jobId)) {
    if (e.Status === "blocked") cancel(tx, e, `job ${JSON.stringify(jobId)} no longer exists`, nowNs);
  }
}

function cancel(tx: StateWriter, e: Evaluation, description: string, nowNs: number): void {
  tx.putEval({ ...e, Status: "cancelled", StatusDescription: description, ModifyTime: nowNs });
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
