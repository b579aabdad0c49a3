/**
 * When a system job's failed alloc is placed again on its node. Pure.
 *
 * Nomad places a failed system alloc again at once, on the same node, on every evaluation; an alloc
 * that fails without restarting (a driver error the restart policy calls unrecoverable: a refused
 * bind, a missing image) then makes a new alloc every few hundred milliseconds for as long as the
 * job exists — thousands of records an hour, each a write and an event. berth backs off as
 * Kubernetes' DaemonSet controller does for its failed pods: the first failure of a slot is
 * replaced at once (Nomad's behaviour, and what a one-off crash wants), each further consecutive
 * failure doubles the wait from SYSTEM_RETRY_BASE_NS up to SYSTEM_RETRY_MAX_NS. An alloc that ran
 * for SYSTEM_RETRY_RESET_NS or more before failing starts a new streak.
 *
 * The streak is the chain of PreviousAllocation links on the slot (same node, same name, same job
 * version: a new version starts afresh), walked through `byId` — the job's allocs the reconciler
 * read; an alloc no longer there (garbage-collected) ends the chain.
 */
import type { Allocation } from "./alloc.js";
import { NS_PER_S } from "./job.js";

export const SYSTEM_RETRY_BASE_NS = 5 * NS_PER_S;
export const SYSTEM_RETRY_MAX_NS = 300 * NS_PER_S;
export const SYSTEM_RETRY_RESET_NS = 600 * NS_PER_S;

type RetryFields = Pick<
  Allocation,
  "ID" | "NodeID" | "Name" | "ClientStatus" | "CreateTime" | "ModifyTime" | "PreviousAllocation"
> & { Job: Pick<Allocation["Job"], "Version"> };

/** Consecutive failures of the slot ending with `last` (0 when `last` did not fail). */
export function failureStreak<T extends RetryFields>(last: T, byId: ReadonlyMap<string, T>): number {
  let streak = 0;
  const seen = new Set<string>();
  for (let a: T | undefined = last; a && !seen.has(a.ID); a = byId.get(a.PreviousAllocation ?? "")) {
    seen.add(a.ID);
    const sameSlot = a.NodeID === last.NodeID && a.Name === last.Name && a.Job.Version === last.Job.Version;
    if (!sameSlot || a.ClientStatus !== "failed") break;
    streak++;
    if (a.ModifyTime - a.CreateTime >= SYSTEM_RETRY_RESET_NS) break;
  }
  return streak;
}

/** How long after the `streak`-th consecutive failure the slot is placed again. */
export function systemRetryDelay(streak: number): number {
  if (streak <= 1) return 0;
  return Math.min(SYSTEM_RETRY_BASE_NS * 2 ** Math.min(streak - 2, 32), SYSTEM_RETRY_MAX_NS);
}

/** Unix ns from which the slot whose newest alloc is `last` may be placed again. */
export function systemRetryTime<T extends RetryFields>(last: T, byId: ReadonlyMap<string, T>): number {
  return last.ModifyTime + systemRetryDelay(failureStreak(last, byId));
}
