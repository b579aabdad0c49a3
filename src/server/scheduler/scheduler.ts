/**
 * Runs the reconciler for a job inside one write transaction, records the pass as an Evaluation
 * (evals.ts) in that same transaction, and keeps the set of "blocked" jobs (some alloc found no
 * node). Blocked jobs are re-evaluated when capacity may have appeared: a node registered or
 * changed its fingerprint, a volume changed or a claim was freed — Nomad's blocked evals, whose
 * records are in the store and whose set is kept in memory, rebuilt at start by evaluating every
 * job.
 */
import type { EvalTrigger } from "../../structs/eval.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import type { Logger } from "../../internal/log.js";
import type { StateStore, StateWriter } from "../state/store.js";
import { cancelBlocked, recordPass } from "./evals.js";
import { computePlan, jobStatus, type PlacementFailure } from "./plan.js";

export interface EvalResult {
  placed: number;
  stopped: number;
  failures: PlacementFailure[];
  index: number;
  /** The eval that records this pass ("" when none was: the job is gone, or a quiet pass did nothing). */
  evalId: string;
  /** The job's blocked eval, "" when every alloc has a node. */
  blockedEvalId: string;
}

/** How a pass is recorded. */
export interface EvalOptions {
  /** Record an eval only when the pass placed, stopped or failed to place something. */
  quiet?: boolean;
}

function key(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

export class Scheduler {
  private readonly blocked = new Map<string, { namespace: string; id: string }>();
  private retrying: Promise<void> | null = null;
  private retryAgain = false;

  constructor(
    private readonly store: StateStore,
    private readonly log: Logger,
  ) {}

  /**
   * Reconciles one job; `trigger` is what asked for it (Nomad's TriggeredBy). A job that no longer
   * exists is a no-op, apart from cancelling its blocked eval.
   */
  async evaluate(
    namespace: string,
    id: string,
    trigger: EvalTrigger = "job-register",
    opts: EvalOptions = {},
  ): Promise<EvalResult> {
    const result = await this.store.txn((tx) => evaluateIn(tx, namespace, id, trigger, opts));
    if (result.failures.length > 0) {
      this.blocked.set(key(namespace, id), { namespace, id });
      this.log.info("job has allocs that found no node", {
        job: id,
        namespace,
        eval: result.evalId,
        failures: result.failures.map((f) => ({
          group: f.group,
          missing: f.missing,
          reasons: f.metrics.ConstraintFiltered,
        })),
      });
    } else {
      this.blocked.delete(key(namespace, id));
    }
    return result;
  }

  /** Re-evaluates every blocked job; overlapping triggers coalesce into one more pass. */
  retryBlocked(): Promise<void> {
    if (this.retrying) {
      this.retryAgain = true;
      return this.retrying;
    }
    this.retrying = (async () => {
      do {
        this.retryAgain = false;
        for (const { namespace, id } of [...this.blocked.values()]) {
          try {
            await this.evaluate(namespace, id, "queued-allocs");
          } catch (err) {
            this.log.error("re-evaluating a blocked job failed", { job: id, namespace, error: err });
          }
        }
      } while (this.retryAgain);
    })().finally(() => {
      this.retrying = null;
    });
    return this.retrying;
  }

  /**
   * Evaluates every job; run at start so jobs blocked before a restart get another chance (their
   * blocked evals run again). A job with nothing to do records no eval, so restarts do not push a
   * job's history out.
   */
  async evaluateAll(): Promise<void> {
    for (const job of this.store.listJobs()) {
      await this.evaluate(job.Namespace, job.ID, "queued-allocs", { quiet: true });
    }
  }

  isBlocked(namespace: string, id: string): boolean {
    return this.blocked.has(key(namespace, id));
  }
}

/** The transaction body: plan, apply, refresh the job's status and record the eval. */
export function evaluateIn(
  tx: StateWriter,
  namespace: string,
  id: string,
  trigger: EvalTrigger = "job-register",
  opts: EvalOptions = {},
): EvalResult {
  const before = tx.index();
  const nowNs = Date.now() * NS_PER_MS;
  const job = tx.getJob(namespace, id);
  if (!job) {
    cancelBlocked(tx, namespace, id, nowNs);
    return { placed: 0, stopped: 0, failures: [], index: before, evalId: "", blockedEvalId: "" };
  }
  const plan = computePlan(tx, job, nowNs);
  for (const { alloc, description } of plan.stop) {
    tx.putAlloc({ ...alloc, DesiredStatus: "stop", DesiredDescription: description, ModifyTime: nowNs });
  }
  for (const alloc of plan.place) tx.putAlloc(alloc);
  refreshJobStatus(tx, job);
  const placed = plan.place.map((a) => a.ID);
  const outcome = { placed, stopped: plan.stop.length, failures: plan.failures };
  const recorded = recordPass(tx, job, outcome, trigger, nowNs, opts.quiet);
  const evalIndex = recorded.evalId ? (tx.getEval(recorded.evalId)?.ModifyIndex ?? before) : before;
  return {
    placed: placed.length,
    stopped: outcome.stopped,
    failures: outcome.failures,
    index: placed.length + outcome.stopped > 0 ? tx.writeIndex : evalIndex,
    ...recorded,
  };
}

/** Recomputes and stores the job's status from its allocs (a no-op write when unchanged). */
export function refreshJobStatus(tx: StateWriter, job: Job): void {
  const status = jobStatus(job, tx.allocsByJob(job.Namespace, job.ID));
  if (status !== job.Status) tx.putJob({ ...job, Status: status });
}
