/**
 * Runs the reconciler for a job inside one write transaction and keeps the set of "blocked" jobs
 * (some alloc found no node). Blocked jobs are re-evaluated when capacity may have appeared: a
 * node registered or changed its fingerprint, a volume changed or a claim was freed — Nomad's
 * blocked evals, kept in memory and rebuilt at start by evaluating every job.
 */
import { NS_PER_MS, type Job } from "../../structs/job.js";
import type { Logger } from "../../internal/log.js";
import type { StateStore, StateWriter } from "../state/store.js";
import { computePlan, jobStatus, type PlacementFailure } from "./plan.js";

export interface EvalResult {
  placed: number;
  stopped: number;
  failures: PlacementFailure[];
  index: number;
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

  /** Reconciles one job. A job that no longer exists is a no-op. */
  async evaluate(namespace: string, id: string): Promise<EvalResult> {
    const result = await this.store.txn((tx) => evaluateIn(tx, namespace, id));
    if (result.failures.length > 0) {
      this.blocked.set(key(namespace, id), { namespace, id });
      this.log.info("job has allocs that found no node", {
        job: id,
        namespace,
        failures: result.failures,
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
            await this.evaluate(namespace, id);
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

  /** Evaluates every job; run at start so jobs blocked before a restart get another chance. */
  async evaluateAll(): Promise<void> {
    for (const job of this.store.listJobs()) {
      await this.evaluate(job.Namespace, job.ID);
    }
  }

  isBlocked(namespace: string, id: string): boolean {
    return this.blocked.has(key(namespace, id));
  }
}

/** The transaction body: plan, apply, and refresh the job's status. */
export function evaluateIn(tx: StateWriter, namespace: string, id: string): EvalResult {
  const job = tx.getJob(namespace, id);
  if (!job) return { placed: 0, stopped: 0, failures: [], index: tx.index() };
  const nowNs = Date.now() * NS_PER_MS;
  const plan = computePlan(tx, job, nowNs);
  for (const { alloc, description } of plan.stop) {
    tx.putAlloc({ ...alloc, DesiredStatus: "stop", DesiredDescription: description, ModifyTime: nowNs });
  }
  for (const alloc of plan.place) tx.putAlloc(alloc);
  refreshJobStatus(tx, job);
  return {
    placed: plan.place.length,
    stopped: plan.stop.length,
    failures: plan.failures,
    index: plan.place.length + plan.stop.length > 0 ? tx.writeIndex : tx.index(),
  };
}

/** Recomputes and stores the job's status from its allocs (a no-op write when unchanged). */
export function refreshJobStatus(tx: StateWriter, job: Job): void {
  const status = jobStatus(job, tx.allocsByJob(job.Namespace, job.ID));
  if (status !== job.Status) tx.putJob({ ...job, Status: status });
}
