/**
 * Records a scheduler pass as Nomad Evaluations (the status rules are in structs/eval.ts), inside
 * the pass's own write transaction, and keeps each job's history bounded (EVALS_KEPT_PER_JOB).
 */
import {
  blockedDuplicateDescription,
  blockedEvalFor,
  blockedUnneededDescription,
  evalsToPrune,
  followupEvalFor,
  isEvalLive,
  newEval,
  type AllocMetric,
  type EvalTrigger,
  type Evaluation,
} from "../../structs/eval.js";
import { newUuid } from "../../structs/ids.js";
import type { Job } from "../../structs/job.js";
import type { StateWriter } from "../state/store.js";
import type { PlacementFailure } from "./plan_types.js";
import type { FollowupPlan } from "./reschedule_plan.js";

/** What a pass did, as the eval records it. */
export interface PassOutcome {
  /** IDs of the allocs the pass placed. */
  placed: string[];
  stopped: number;
  failures: PlacementFailure[];
  /** Delayed evals the pass creates for failed allocs not yet due. */
  followups?: FollowupPlan[];
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
 * completed, and no new eval is made. The run of a delayed follow-up eval (`running`) completes
 * that eval. Any other pass makes a complete eval; either adds a blocked one when allocs found no
 * node, and older blocked evals of the job are cancelled. With `quiet`, a pass that placed,
 * stopped and deferred nothing, and failed only where a blocked eval already waits, records nothing. The pass's follow-up evals are stored
 * `pending`, naming the eval they follow as PreviousEval.
 */
export function recordPass(
  tx: StateWriter,
  job: Job,
  out: PassOutcome,
  trigger: EvalTrigger,
  nowNs: number,
  quiet = false,
  running?: Evaluation,
): Recorded {
  const followups = out.followups ?? [];
  const blocked = tx.evalsByJob(job.Namespace, job.ID).filter((e) => e.Status === "blocked");
  const failed = failedTGAllocs(out.failures);
  const queued = queuedAllocations(job, out.failures);
  const current = blocked.at(-1);
  if (trigger === "queued-allocs" && current) {
    return rerunBlocked(tx, job, blocked, { ...out, followups }, { failed, queued }, nowNs);
  }
  // Idle: nothing placed, stopped or deferred, and no failure the job's blocked eval does not
  // already stand for (a deployment watcher's pass over a job waiting for capacity adds nothing).
  const still = out.placed.length + out.stopped + followups.length === 0;
  if (quiet && still && !running && (!failed || current)) {
    return { evalId: "", blockedEvalId: failed ? current!.ID : "" };
  }
  const base = running
    ? {
        ...running,
        Status: "complete" as const,
        StatusDescription: "",
        SnapshotIndex: tx.index(),
        ModifyTime: nowNs,
      }
    : newEval(job, newUuid(), trigger, nowNs, tx.index());
  const ev: Evaluation = {
    ...base,
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
  putFollowups(tx, ev, followups);
  for (const id of evalsToPrune(tx.evalsByJob(job.Namespace, job.ID))) tx.deleteEval(id);
  return { evalId: ev.ID, blockedEvalId: next?.ID ?? "" };
}

/**
 * A blocked eval's own run (the job's newest blocked eval, the last of `blocked`): the older
 * blocked evals are cancelled as duplicates; it is reblocked with refreshed FailedTGAllocs (written
 * only when something changed) while allocs still find no node, else completed.
 */
function rerunBlocked(
  tx: StateWriter,
  job: Job,
  blocked: readonly Evaluation[],
  out: PassOutcome & { followups: FollowupPlan[] },
  counts: { failed: Record<string, AllocMetric> | null; queued: Record<string, number> },
  nowNs: number,
): Recorded {
  const current = blocked[blocked.length - 1]!;
  const { failed, queued } = counts;
  for (const b of blocked.slice(0, -1)) cancel(tx, b, blockedDuplicateDescription(job.ID), nowNs);
  putFollowups(tx, current, out.followups);
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

function putFollowups(tx: StateWriter, parent: Evaluation, followups: FollowupPlan[]): void {
  for (const f of followups) tx.putEval(followupEvalFor(parent, f.evalId, f.waitUntil));
}

/** Cancels the blocked and delayed evals of a job that is gone. */
export function cancelBlocked(tx: StateWriter, namespace: string, jobId: string, nowNs: number): void {
  cancelLive(tx, namespace, jobId, `job ${JSON.stringify(jobId)} no longer exists`, nowNs);
}

/** Cancels the job's live evals (blocked and delayed); a stopped job's follow-ups have nothing to do. */
export function cancelLive(
  tx: StateWriter,
  namespace: string,
  jobId: string,
  why: string,
  nowNs: number,
): void {
  for (const e of tx.evalsByJob(namespace, jobId)) {
    if (isEvalLive(e)) cancel(tx, e, why, nowNs);
  }
}

function cancel(tx: StateWriter, e: Evaluation, description: string, nowNs: number): void {
  tx.putEval({ ...e, Status: "cancelled", StatusDescription: description, ModifyTime: nowNs });
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
