/**
 * The periodic dispatcher (Nomad's nomad/periodic.go): a leader loop that launches a child of each
 * active periodic job at every tick of its crons, built fresh for each term (leader/loops.ts).
 *
 * - Term start (Nomad's restorePeriodicDispatcher): every active periodic job is tracked with its
 *   next tick after now, and a job whose tick fell due since its last launch while no leader ran
 *   is launched once, now (the catch-up; however many ticks were missed, one launch).
 * - Then it sleeps until the earliest tick, or until a job is written (the commit feed names the
 *   jobs; only those are read again), launches what is due, and tracks each job's next tick after
 *   the one it launched. A job whose spec changed is tracked afresh from now, as Nomad's Add does.
 * - Every launch is one transaction (launch.ts): the child and the job's last launch are written
 *   together, and the decision (structs/periodic_decide.ts) is made inside it, so two leaders (a
 *   deposed one still running, a new one catching up) never launch one tick twice. The write is
 *   refused once the term's fence no longer holds (its signal aborted, or its etcd session not
 *   confirmed fresh): a deposed leader does not launch.
 * - The child is then evaluated by the scheduler, as any registered job; a child written whose
 *   term ended before its pass is placed by the next leader's start-up pass over every job.
 */
import type { Logger } from "../../internal/log.js";
import { isBerthError } from "../../structs/errors.js";
import type { Job } from "../../structs/job.js";
import { nextLaunch } from "../../structs/periodic.js";
import { isPeriodicActive, type LaunchKind } from "../../structs/periodic_decide.js";
import type { JobScheduler } from "../deps.js";
import type { LeaderLoop, LeaderTerm } from "../leader/gate.js";
import type { StateStore } from "../state/store.js";
import { launchIn } from "./launch.js";
import { withDefaults } from "../../internal/with_defaults.js";

export interface PeriodicDispatcherOptions {
  /** The longest sleep between looks at the tracked jobs (a job write wakes the loop sooner). */
  maxSleepMs: number;
  /** Unix ms. */
  now: () => number;
}

const DEFAULTS: PeriodicDispatcherOptions = { maxSleepMs: 30_000, now: Date.now };

interface Tracked {
  namespace: string;
  id: string;
  jobModifyIndex: number;
  /** The next tick to launch, unix ms; null: none left. */
  next: number | null;
}

const key = (namespace: string, id: string) => `${namespace}\u0000${id}`;

export class PeriodicDispatcher implements LeaderLoop {
  readonly name = "periodic dispatcher";
  private readonly opts: PeriodicDispatcherOptions;
  private readonly tracked = new Map<string, Tracked>();
  private readonly dirty = new Map<string, { namespace: string; id: string }>();
  private wake: (() => void) | undefined;
  private ctl: AbortController | undefined;
  private running: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly scheduler: Pick<JobScheduler, "evaluate">,
    private readonly log: Logger,
    opts: Partial<PeriodicDispatcherOptions> = {},
  ) {
    this.opts = withDefaults(DEFAULTS, opts);
  }

  start(term: LeaderTerm): void {
    const ctl = new AbortController();
    this.ctl = ctl;
    const onAbort = () => ctl.abort(term.signal.reason);
    if (term.signal.aborted) return;
    term.signal.addEventListener("abort", onAbort, { once: true });
    this.unsubscribe = this.store.onCommit((txn) => {
      for (const c of txn.changes) {
        if (c.table === "jobs") this.dirty.set(key(c.namespace, c.id), { namespace: c.namespace, id: c.id });
      }
      if (this.dirty.size > 0) this.wake?.();
    });
    this.running = this.loop(term, ctl.signal)
      .catch((err: unknown) => {
        if (!ctl.signal.aborted) this.log.error("the periodic dispatcher stopped", { error: err });
      })
      .finally(() => term.signal.removeEventListener("abort", onAbort));
  }

  async stop(): Promise<void> {
    this.ctl?.abort("stopped");
    this.wake?.();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.running;
  }

  /** The jobs tracked and their next tick (tests, `job status`). */
  nextLaunches(): { namespace: string; id: string; next: number | null }[] {
    return [...this.tracked.values()].map(({ namespace, id, next }) => ({ namespace, id, next }));
  }

  private async loop(term: LeaderTerm, signal: AbortSignal): Promise<void> {
    const startedAt = this.opts.now();
    for (const job of this.store.listJobs()) {
      if (signal.aborted) return;
      if (!isPeriodicActive(job)) continue;
      this.track(job, startedAt);
      // The catch-up: launched only if a tick fell due since the job's last launch.
      await this.launch(term, job.Namespace, job.ID, "scheduled", startedAt);
    }
    while (!signal.aborted) {
      this.syncDirty();
      const now = this.opts.now();
      for (const t of [...this.tracked.values()]) {
        if (signal.aborted) return;
        if (t.next === null || t.next > now) continue;
        const at = t.next;
        t.next = this.nextAfter(t, at);
        await this.launch(term, t.namespace, t.id, "scheduled", at);
      }
      await this.sleep(signal);
    }
  }

  private nextAfter(t: Tracked, afterMs: number): number | null {
    const job = this.store.getJob(t.namespace, t.id);
    return job?.Periodic ? nextLaunch(job.Periodic, afterMs) : null;
  }

  private track(job: Job, fromMs: number): void {
    this.tracked.set(key(job.Namespace, job.ID), {
      namespace: job.Namespace,
      id: job.ID,
      jobModifyIndex: job.JobModifyIndex,
      next: job.Periodic ? nextLaunch(job.Periodic, fromMs) : null,
    });
  }

  /** Reads again the jobs written since the last look: new, changed, stopped or gone. */
  private syncDirty(): void {
    const now = this.opts.now();
    for (const [k, { namespace, id }] of this.dirty) {
      this.dirty.delete(k);
      const job = this.store.getJob(namespace, id);
      if (!job || !isPeriodicActive(job)) {
        this.tracked.delete(k);
        continue;
      }
      if (this.tracked.get(k)?.jobModifyIndex !== job.JobModifyIndex) this.track(job, now);
    }
  }

  private sleep(signal: AbortSignal): Promise<void> {
    if (this.dirty.size > 0 || signal.aborted) return Promise.resolve();
    let earliest = Infinity;
    for (const t of this.tracked.values()) if (t.next !== null && t.next < earliest) earliest = t.next;
    const ms = Math.max(0, Math.min(this.opts.maxSleepMs, earliest - this.opts.now()));
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  /** One launch attempt; a failure is logged and the tick is not retried (Nomad's as well). */
  private async launch(term: LeaderTerm, namespace: string, id: string, kind: LaunchKind, atMs: number) {
    try {
      const out = await this.store.txn((tx) =>
        launchIn(tx, namespace, id, kind, atMs, () => term.fence.refusal()),
      );
      if (!out.decision.launch) {
        if (out.decision.reason === "overlap") {
          this.log.info("skipping launch of periodic job because job prohibits overlap", {
            job: id,
            namespace,
          });
        }
        return;
      }
      this.log.info("launched periodic job", { job: id, namespace, child: out.childId });
      await this.scheduler.evaluate(namespace, out.childId, "periodic-job");
    } catch (err) {
      if (term.signal.aborted || (isBerthError(err) && err.code === "ERR_FENCED")) return;
      this.log.error("launching a periodic job failed", { job: id, namespace, error: err });
    }
  }
}
