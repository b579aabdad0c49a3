/**
 * Runs the reconciler for a job inside one write transaction, records the pass as an Evaluation
 * (evals.ts) in that same transaction, and keeps the set of "blocked" jobs (some alloc found no
 * node). Blocked jobs are re-evaluated when capacity may have appeared: a node registered or
 * changed its fingerprint, a volume changed or a claim was freed — Nomad's blocked evals, whose
 * records are in the store and whose set is kept in memory, rebuilt at start by evaluating every
 * job. A trigger names what it changed and wakes only the jobs whose wait it matches
 * (blocked_wait.ts). No trigger is lost to a pass in flight (the unblock index, as Nomad's blocked
 * evals keep one): see `track` and docs/design.md "Blocked jobs never miss a wake-up".
 *
 * Delayed follow-up evals (failed allocs waiting for their reschedule delay) are stored `pending`
 * with their WaitUntil; the scheduler keeps one timer per such eval (FollowupTimers) and runs the
 * eval when it fires. The timers are armed when a pass creates the eval and, at start, for every
 * pending eval in the store, so a server restart delays a reschedule by no more than the restart.
 *
 * With several servers only the leader runs passes (leader/scheduler_front.ts sends the others'
 * there); when it loses leadership, standDown() drops the blocked set and the timers, which the
 * next leader rebuilds from the store (its start-up pass), and a pass in flight finishes without
 * touching them.
 *
 * System and sysbatch jobs run on every eligible node, so a node that registers, comes back, changes
 * its fingerprint or becomes eligible may want their allocs: retryBlocked() evaluates them too. The
 * scheduler keeps them in an index (systemJobs) that its passes maintain — every register, stop and
 * purge of a job runs one — and its start-up pass rebuilds, so a node change costs a pass per
 * system job, never a scan of every job.
 *
 * Nothing here holds the event loop for long: a pass plans ahead of its transaction in steps,
 * yielding between them (plan_ahead.ts, which says why a yield never applies a stale plan), and the
 * loops over many jobs (blocked retries, the start-up pass) yield between passes.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { EvalTrigger } from "../../structs/eval.js";
import { NS_PER_MS, runsOnEveryNode } from "../../structs/job.js";
import type { Logger } from "../../internal/log.js";
import { BerthError } from "../../structs/errors.js";
import { sweepQuarantinedJobAllocs } from "../state/quarantine/jobs.js";
import type { StateStore } from "../state/store.js";
import { FollowupTimers } from "./followup_timers.js";
import { NodeUsageIndex, USAGE_REFRESH_MS } from "./node_usage.js";
import { PLAN_AHEAD_PLACEMENTS, sliceOf } from "./batches.js";
import { evaluateIn, type BatchResult, type EvalOptions, type EvalResult } from "./evaluate_in.js";
import { JobPasses } from "./job_passes.js";
import { NodeListCache } from "./node_list_cache.js";
import { planAhead, type PlannedAhead } from "./plan_ahead.js";
import { stillValidSince } from "./rebase.js";
import { BlockedSet } from "./blocked_set.js";
import { signalsOf, waitOf, type Wake } from "./blocked_wait.js";

/**
 * How often the node list catches up with node writes between passes (node_list_cache.ts). A catch-up
 * reads only the nodes written since the last and nothing when none was, so a pass after a burst of
 * registrations or fingerprint updates finds the list read already instead of reading thousands.
 */
const NODE_LIST_REFRESH_MS = 1_000;

function key(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

export class Scheduler {
  /** The blocked jobs and what each waits for (blocked_set.ts, blocked_wait.ts). */
  private readonly blocked = new BlockedSet();
  /** The system and sysbatch jobs that are not stopped, by key (this term's; see the file comment). */
  private readonly systemJobs = new Map<string, { namespace: string; id: string }>();
  /**
   * Jobs a retry round still has to run (a trigger puts every blocked job and every system job
   * here, `track` one); `system`: run as a system job's quiet node-update pass.
   */
  private readonly due = new Map<string, { namespace: string; id: string; system?: boolean }>();
  /**
   * The store's index when the last "capacity may have appeared" trigger (retryBlocked) came: at
   * or above the index of the change that prompted it. Only grows (across terms too: an index is
   * the cluster's, and a higher one only costs an extra pass).
   */
  private unblockIndex = 0;
  private retrying: Promise<void> | null = null;
  private readonly timers: FollowupTimers;
  /** Every pass in flight (from an RPC, a retry, a timer, a loop), so stop() can wait for them. */
  private readonly passes = new Set<Promise<void>>();
  private stopping = false;
  /** One pass per job at a time (job_passes.ts says why). */
  private readonly jobPasses = new JobPasses<EvalResult>();
  /**
   * Bumped by standDown(): the blocked set and the timers belong to one term as leader, so a pass,
   * retry or start-up pass begun in an earlier term leaves them alone.
   */
  private term = 0;
  /** Each node's live usage, kept by deltas from the store (node_usage.ts). */
  private readonly usage = new NodeUsageIndex();
  /** The nodes plans read, parsed once per change of the nodes table (node_list_cache.ts). */
  private readonly nodeList = new NodeListCache();

  /** Refreshes the usage index between passes (node_usage.ts says why it must). */
  private readonly usageTimer: NodeJS.Timeout;
  /** Keeps the node list following node writes between passes, so a pass rarely reads any. */
  private readonly nodeListTimer: NodeJS.Timeout;

  constructor(
    private readonly store: StateStore,
    private readonly log: Logger,
  ) {
    this.timers = new FollowupTimers((ev) => this.runFollowup(ev.Namespace, ev.JobID, ev.ID));
    this.usageTimer = setInterval(() => {
      this.usage
        .catchUp(this.store)
        .then(() => this.usage.refresh(this.store))
        .catch((err: unknown) =>
          this.log.error("refreshing the scheduler's usage index failed", { error: err }),
        );
    }, USAGE_REFRESH_MS);
    this.usageTimer.unref();
    this.nodeListTimer = setInterval(() => {
      try {
        this.nodeList.list(this.store);
      } catch (err) {
        this.log.error("refreshing the scheduler's node list failed", { error: err });
      }
    }, NODE_LIST_REFRESH_MS);
    this.nodeListTimer.unref();
  }

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
    if (this.stopping) throw new BerthError("ERR_ABORTED", "the scheduler is stopping");
    // The pass belongs to the term it was asked in, though it may start after a standDown().
    const term = this.term;
    const request = JSON.stringify([term, trigger, opts.quiet ?? false, opts.followupEvalId ?? ""]);
    const pass = this.jobPasses.run(key(namespace, id), request, () => {
      if (this.stopping) throw new BerthError("ERR_ABORTED", "the scheduler is stopping");
      return this.pass(namespace, id, trigger, opts, term);
    });
    const settled = pass.then(
      () => undefined,
      () => undefined,
    );
    this.passes.add(settled);
    void settled.finally(() => this.passes.delete(settled));
    return pass;
  }

  private async pass(
    namespace: string,
    id: string,
    trigger: EvalTrigger,
    opts: EvalOptions,
    term: number,
  ): Promise<EvalResult> {
    // A big pass is applied in batches (plan.ts PlanOptions.maxPlace): each batch is planned ahead
    // from the state the one before it left and written in its own transaction, so no transaction
    // holds the loop for long; the last one records the eval, naming every alloc the pass placed.
    const placedBefore: string[] = [];
    let result: BatchResult;
    let ahead: PlannedAhead | undefined;
    let planned = false;
    for (;;) {
      if (!planned) {
        await this.usage.catchUp(this.store);
        ahead = await planAhead(this.store, namespace, id, opts.followupEvalId, {
          usage: this.usage,
          maxPlace: PLAN_AHEAD_PLACEMENTS,
          nodes: this.nodeList,
        });
        planned = true;
      }
      // A plan whose index has moved is applied when nothing it relied on was taken meanwhile: the
      // transaction asks (stillValid), so the writes queued ahead of it in its batch count too.
      const [now, rest] = ahead ? sliceOf(ahead) : [undefined, undefined];
      result = await this.store.txn((tx) =>
        evaluateIn(tx, namespace, id, trigger, opts, now, {
          placedBefore,
          cachedNodes: () => this.nodeList.cached(this.store),
          stillValid: (from) => stillValidSince(this.store, from),
        }),
      );
      if (!result.more) break;
      placedBefore.push(...result.placedIds);
      // The rest of the plan is still the plan of the state this batch left, as long as nothing
      // else it relied on was written since (evaluateIn checks); else the rest is planned again.
      if (result.usedAhead && rest) ahead = { ...rest, index: result.index };
      else planned = false;
    }
    if (term === this.term) {
      this.track(namespace, id, result, result.snapshotIndex);
      this.trackSystem(namespace, id);
    }
    if (result.failures.length > 0) {
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
    }
    const { more: _more, placedIds: _ids, usedAhead: _ahead, snapshotIndex: _at, ...evalResult } = result;
    return evalResult;
  }

  /**
   * Arms the pass's delayed evals and keeps the job in (or out of) the blocked set.
   *
   * The lost wake-up this closes: a pass reads the state at `snapshotIndex`, finds no node, and
   * only puts its job in the blocked set once its transaction has come back; a change that may
   * free capacity and commits after that read (a node, a plugin, a volume, a freed claim or
   * alloc) sends its retry meanwhile, and the retry, looking at the set before the job is in it,
   * passes it by. Nothing would run the job again until some unrelated trigger. So a job that
   * ends blocked while a trigger newer than its pass's read has come (unblockIndex above
   * snapshotIndex) is run again at once — Nomad's blocked evals do the same with their unblock
   * indexes and the eval's SnapshotIndex. An index above the change's own only costs a pass.
   */
  private track(namespace: string, id: string, result: EvalResult, snapshotIndex: number): void {
    for (const f of result.followups) {
      this.timers.arm({ ID: f.evalId, Namespace: namespace, JobID: id }, f.waitUntil / NS_PER_MS);
    }
    const k = key(namespace, id);
    // Held slots wait for a single-writer volume to be released: retried like a blocked job when
    // a claim is freed (claim.ts), or nothing would ever fill the slot.
    if (result.failures.length === 0 && result.heldSlots === 0) {
      this.blocked.delete(k);
      return;
    }
    const job = this.store.getJob(namespace, id);
    if (!job) {
      this.blocked.delete(k);
      return;
    }
    const signals = result.failures.map((f) => f.signals ?? signalsOf(f.metrics));
    const wait = waitOf(job, signals, this.store);
    this.blocked.set(k, { namespace, id }, wait);
    if (this.unblockIndex > snapshotIndex && this.blocked.missed(snapshotIndex, wait)) {
      this.due.set(k, { namespace, id });
      void this.runDue();
    }
  }

  /** Keeps the job in (or out of) the index of system jobs, from its stored record. */
  private trackSystem(namespace: string, id: string): void {
    const job = this.store.getJob(namespace, id);
    if (job && runsOnEveryNode(job.Type) && !job.Stop)
      this.systemJobs.set(key(namespace, id), { namespace, id });
    else this.systemJobs.delete(key(namespace, id));
  }

  /**
   * This server no longer leads: forgets the blocked jobs and clears the follow-up timers (their
   * evals stay stored; the next leader's start-up pass, evaluateAll, re-arms them and runs the
   * blocked jobs again). Passes in flight finish, their outcome left out of the set; a retry of
   * blocked jobs ends after its current pass. The scheduler keeps serving: a new term starts with
   * evaluateAll.
   */
  standDown(): void {
    this.term++;
    this.blocked.clear();
    this.due.clear();
    this.systemJobs.clear();
    this.timers.clear();
  }

  /**
   * Capacity or a node may have appeared: re-evaluates the blocked jobs that `wakes` (what the write
   * changed; absent: anything) may unblock, and every system job when a node may have changed
   * (never rejects; quietly: a pass that finds nothing to do records no eval). Triggers that come
   * while a round runs join it: a job still waiting for its turn is not run twice, one whose turn
   * has come (its pass may have read the state before the trigger's change) is run again.
   * Resolves once no job is due.
   */
  retryBlocked(wakes?: readonly Wake[]): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const index = this.store.index();
    this.unblockIndex = Math.max(this.unblockIndex, index);
    this.blocked.wake(index, wakes ?? [{ Kind: "all" }]);
    return this.runDue();
  }

  /**
   * Runs the due jobs one at a time, as quiet `queued-allocs` passes: the run of the job's blocked
   * eval, and no new eval when another pass has placed what it waited for meanwhile. A job that
   * left the blocked set before its turn (some pass placed everything) is skipped.
   */
  private runDue(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.retrying) return this.retrying;
    this.retrying = (async () => {
      for (;;) {
        await yieldToLoop();
        // Looked at after the yield, so a trigger during the yield does not run a job twice.
        if (this.blocked.waking) {
          const { due, nodeChanged } = this.blocked.takeDue();
          for (const [k, job] of due) this.due.set(k, job);
          if (nodeChanged)
            for (const [k, job] of this.systemJobs)
              if (!this.blocked.has(k)) this.due.set(k, { ...job, system: true });
        }
        const next = this.stopping ? undefined : this.due.entries().next().value;
        if (next === undefined) {
          // In the same turn as the look at `due`: a job made due from here on starts a round.
          this.retrying = null;
          return;
        }
        const [k, { namespace, id, system }] = next;
        this.due.delete(k);
        if (system ? !this.systemJobs.has(k) : !this.blocked.has(k)) continue;
        try {
          await this.evaluate(namespace, id, system ? "node-update" : "queued-allocs", { quiet: true });
        } catch (err) {
          this.log.error("re-evaluating a blocked job failed", { job: id, namespace, error: err });
        }
      }
    })();
    return this.retrying;
  }

  /**
   * Evaluates every job; run at start so jobs blocked before a restart get another chance (their
   * blocked evals run again). A job with nothing to do records no eval, so restarts do not push a
   * job's history out. One job whose pass fails is logged and left for its next trigger: it never
   * fails the start nor keeps the other jobs from being evaluated.
   *
   * `signal` is the leader term's (leader/gate.ts): once it aborts the pass ends before its next
   * job, so a lost lease never waits behind a long start-up pass; a pass already running for one
   * job finishes (its own transaction), and the next leader's start-up pass covers the rest.
   */
  async evaluateAll(signal?: AbortSignal): Promise<void> {
    const term = this.term;
    if (signal?.aborted) return;
    this.timers.armAll(this.store.listEvals(), (ev, err) =>
      this.log.error("arming a delayed eval failed", { eval: ev.ID, job: ev.JobID, error: err }),
    );
    // A quarantined job's allocs would otherwise run on with no job to stop them (quarantine_jobs.ts).
    await sweepQuarantinedJobAllocs(this.store, this.log);
    for (const job of this.store.listJobs()) {
      await yieldToLoop();
      if (this.stopping || term !== this.term || signal?.aborted) return;
      try {
        await this.evaluate(job.Namespace, job.ID, "queued-allocs", { quiet: true });
      } catch (err) {
        if (this.stopping) return;
        this.log.error("evaluating a job at start failed", {
          job: job.ID,
          namespace: job.Namespace,
          error: err,
        });
      }
    }
  }

  /**
   * Server stop: clears the follow-up timers (the evals stay stored and are re-armed at start),
   * refuses new passes (ERR_ABORTED), ends the retry of blocked jobs after its current pass and
   * resolves once every pass in flight has finished, so the store can be closed after it.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.timers.stop();
    clearInterval(this.usageTimer);
    clearInterval(this.nodeListTimer);
    await this.retrying;
    while (this.passes.size > 0) await Promise.allSettled([...this.passes]);
  }

  /** Pending follow-up evals with a timer, for tests and metrics. */
  get armedFollowups(): number {
    return this.timers.size;
  }

  private async runFollowup(namespace: string, jobId: string, evalId: string): Promise<void> {
    if (this.stopping) return;
    try {
      await this.evaluate(namespace, jobId, "alloc-failure", { followupEvalId: evalId });
    } catch (err) {
      this.log.error("running a delayed reschedule eval failed", {
        job: jobId,
        namespace,
        eval: evalId,
        error: err,
      });
    }
  }

  isBlocked(namespace: string, id: string): boolean {
    return this.blocked.has(key(namespace, id));
  }

  /** How many system and sysbatch jobs a node change re-evaluates (for tests and metrics). */
  get systemJobCount(): number {
    return this.systemJobs.size;
  }
}
