/**
 * Whether a periodic job launches a child now, and which: the one rule every launch goes through
 * (the leader's ticks, its catch-up after a failover, `job periodic force`). Pure; the caller runs
 * it inside the transaction that would write the child, so what it reads is what the write commits
 * on (an optimistic store re-runs it when another server wrote first).
 *
 * The rule that keeps launches single across leaders: a scheduled launch at L happens only when
 * a tick is due in (last launch, L] — nextLaunch(last) ≤ L — and L is after the last launch. Two
 * leaders that both think tick T is due name the same child (`<id>/periodic-<T>`) and the second
 * transaction sees the first's launch record, so it skips; a new leader's catch-up at `now` for
 * ticks missed while no leader ran is one launch however many ticks were missed (Nomad's
 * restorePeriodicDispatcher force-runs the job once), and it skips when the old leader's launch of
 * the due tick committed meanwhile.
 */
import type { Job } from "./job.js";
import { isParameterized } from "./parameterized.js";
import { nextLaunch } from "./periodic.js";

/** Nomad's IsPeriodicActive: periodic, enabled, not stopped, not a parameterized parent. */
export function isPeriodicActive(job: Job): boolean {
  return job.Periodic != null && job.Periodic.Enabled && !job.Stop && !isParameterized(job);
}

/** A job that launches children instead of running itself (Nomad: IsPeriodic || IsParameterized). */
export function isLaunchParent(job: Job): boolean {
  return (job.Periodic != null && job.Dispatched !== true) || isParameterized(job);
}

/** Nomad's status of a parent: running while registered and not stopped. */
export function parentStatus(job: Job): "running" | "dead" {
  return job.Stop ? "dead" : "running";
}

export type LaunchKind = "scheduled" | "force";

export type LaunchDecision =
  { launch: true } | { launch: false; reason: "inactive" | "not-due" | "already-launched" | "overlap" };

export interface LaunchFacts {
  job: Job;
  kind: LaunchKind;
  /** The launch time asked for, unix ms. */
  atMs: number;
  /** The recorded last launch, else the job's submit time, unix ms; undefined: none known (due). */
  lastMs: number | undefined;
  /** Whether a child launched earlier is still running (prohibit_overlap). */
  childRunning: boolean;
  /** Whether a job with the child's ID already exists. */
  childExists: boolean;
}

export function decideLaunch(f: LaunchFacts): LaunchDecision {
  const cfg = f.job.Periodic;
  if (!cfg || !isPeriodicActive(f.job)) return { launch: false, reason: "inactive" };
  if (f.childExists) return { launch: false, reason: "already-launched" };
  if (f.kind === "scheduled") {
    if (f.lastMs !== undefined && f.lastMs >= f.atMs) return { launch: false, reason: "already-launched" };
    const due = f.lastMs === undefined ? f.atMs : nextLaunch(cfg, f.lastMs);
    if (due === null || due > f.atMs) return { launch: false, reason: "not-due" };
  }
  // Ticks and the failover catch-up honour prohibit_overlap (Nomad's dispatch and
  // cronJobOverlapAllowed); a forced launch does not (Nomad's ForceEval launches regardless).
  if (f.kind === "scheduled" && cfg.ProhibitOverlap && f.childRunning)
    return { launch: false, reason: "overlap" };
  return { launch: true };
}
