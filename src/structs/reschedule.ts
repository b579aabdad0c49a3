/**
 * Nomad's reschedule policy: whether and when the scheduler replaces a failed alloc. Pure; the
 * reconciler (server/scheduler/plan.ts) asks `rescheduleDecision` about each failed alloc and the
 * CLI shows `nextReschedule`. Durations are nanoseconds, times unix nanoseconds, as in Nomad's JSON.
 *
 * The rules are Nomad's (structs.Allocation.NextDelay / RescheduleEligible / NextRescheduleTime,
 * and the scheduler's updateRescheduleTracker):
 * - a policy is enabled when Attempts > 0 or Unlimited; a disabled policy never reschedules;
 * - limited: the alloc may be replaced while fewer than Attempts reschedule events of its tracker
 *   lie within Interval of its failure, and the next delay is shorter than Interval;
 * - the delay: the first is Delay; then constant keeps Delay, exponential doubles the last event's
 *   delay, fibonacci adds the last two; all are capped at MaxDelay, and once capped, a failure that
 *   comes later than the cap after the last reschedule starts the series again at Delay;
 * - the replacement's tracker keeps the previous events within Interval (limited) or the last five
 *   (unlimited), plus one for this reschedule.
 */
import type { Allocation } from "./alloc.js";
import { NS_PER_S, type JobType } from "./job.js";
import type { RescheduleEvent, ReschedulePolicy, RescheduleTracker } from "./reschedule_policy.js";

export {
  DELAY_FUNCTIONS,
  type DelayFunction,
  type RescheduleEvent,
  type ReschedulePolicy,
  type RescheduleTracker,
} from "./reschedule_policy.js";

const HOUR_NS = 3600 * NS_PER_S;
/** Nomad's ReschedulePolicyMinDelay and ReschedulePolicyMinInterval. */
export const RESCHEDULE_MIN_DELAY_NS = 5 * NS_PER_S;
export const RESCHEDULE_MIN_INTERVAL_NS = 15 * NS_PER_S;
/** How many past events an unlimited policy's tracker keeps (Nomad's maxPastRescheduleEvents). */
export const MAX_PAST_RESCHEDULE_EVENTS = 5;
/** A failed alloc due within this of now is replaced now (Nomad's rescheduleWindowSize). */
export const RESCHEDULE_WINDOW_NS = NS_PER_S;
/** Failed allocs due within this of each other share one follow-up eval (batchedFailedAllocWindowSize). */
export const FOLLOWUP_BATCH_WINDOW_NS = 5 * NS_PER_S;

/** Nomad's DefaultServiceJobReschedulePolicy / DefaultBatchJobReschedulePolicy; system jobs: none. */
export function defaultReschedulePolicy(type: JobType): ReschedulePolicy | null {
  if (type === "service") {
    return {
      Attempts: 0,
      Interval: 0,
      Delay: 30 * NS_PER_S,
      DelayFunction: "exponential",
      MaxDelay: HOUR_NS,
      Unlimited: true,
    };
  }
  if (type === "batch") {
    return {
      Attempts: 1,
      Interval: 24 * HOUR_NS,
      Delay: 5 * NS_PER_S,
      DelayFunction: "constant",
      MaxDelay: 0,
      Unlimited: false,
    };
  }
  return null;
}

export function rescheduleEnabled(p: ReschedulePolicy | null | undefined): p is ReschedulePolicy {
  return !!p && (p.Attempts > 0 || p.Unlimited);
}

/**
 * Nomad's ReschedulePolicy.Validate, as a list of problems (empty when valid). A disabled policy
 * is always valid.
 */
export function reschedulePolicyProblems(p: ReschedulePolicy): string[] {
  if (!rescheduleEnabled(p)) return [];
  const out: string[] = [];
  if (p.Attempts > 0) {
    if (p.Interval <= 0) out.push("Interval must be a non zero value if Attempts > 0");
    if (p.Unlimited) out.push("If Attempts >0, Unlimited cannot also be set to true");
  }
  let delaysOk = true;
  if (p.Delay < RESCHEDULE_MIN_DELAY_NS) {
    out.push(`Delay cannot be less than ${goDuration(RESCHEDULE_MIN_DELAY_NS)} (got ${goDuration(p.Delay)})`);
    delaysOk = false;
  }
  if (p.DelayFunction !== "constant") {
    if (p.MaxDelay < RESCHEDULE_MIN_DELAY_NS) {
      out.push(
        `Max Delay cannot be less than ${goDuration(RESCHEDULE_MIN_DELAY_NS)} (got ${goDuration(p.MaxDelay)})`,
      );
      delaysOk = false;
    } else if (p.MaxDelay < p.Delay) {
      out.push(`Max Delay cannot be less than Delay ${goDuration(p.Delay)} (got ${goDuration(p.MaxDelay)})`);
      delaysOk = false;
    }
  }
  if (!p.Unlimited) {
    if (p.Interval < RESCHEDULE_MIN_INTERVAL_NS) {
      out.push(
        `Interval cannot be less than ${goDuration(RESCHEDULE_MIN_INTERVAL_NS)} (got ${goDuration(p.Interval)})`,
      );
    } else if (delaysOk) {
      const needed = intervalNeeded(p);
      // Nomad's exponential check wants every cumulative delay strictly inside the interval.
      if (p.DelayFunction === "exponential" ? p.Interval <= needed : p.Interval < needed) {
        out.push(
          `Nomad can only make ${p.Attempts} attempts in ${goDuration(p.Interval)} with initial delay ${goDuration(p.Delay)} and delay function ${JSON.stringify(p.DelayFunction)}; set the interval to at least ${goDuration(needed)}`,
        );
      }
    }
  }
  return out;
}

/**
 * The interval `Attempts` reschedules need with these delays (Nomad's viableAttempts). Both delay
 * sequences grow geometrically until MaxDelay caps them and by MaxDelay per attempt after that, so
 * the loops run only up to the cap (a few dozen steps) and the rest is arithmetic: walking every
 * attempt made an Attempts of 401197223 build a 4e8-element array, which killed the server process
 * (V8's "invalid size error"), and 2^53 would loop for ever.
 */
function intervalNeeded(p: ReschedulePolicy): number {
  if (p.DelayFunction === "constant") return p.Attempts * p.Delay;
  if (p.DelayFunction === "exponential") {
    let needed = 0;
    let i = 0;
    for (; i < p.Attempts; i++) {
      const d = 2 ** i * p.Delay;
      if (d > p.MaxDelay) break;
      needed = d;
    }
    // Every attempt from the first capped one on adds MaxDelay.
    return needed + (p.Attempts - i) * p.MaxDelay;
  }
  // Fibonacci: slots 0 and 1 are Delay, slot i the sum of the two before it until that passes
  // MaxDelay; the capped slot is MaxDelay and each later one adds MaxDelay. The answer is the slot
  // of the last attempt (slot 0 for fewer than two attempts, which is Delay as slot 1 is).
  let prev = p.Delay;
  let cur = p.Delay;
  let i = 2;
  for (; i < p.Attempts; i++) {
    const d = cur + prev;
    if (d > p.MaxDelay) break;
    prev = cur;
    cur = d;
  }
  if (i >= p.Attempts) return cur;
  return (p.Attempts - i) * p.MaxDelay;
}

/**
 * The alloc's effective policy: its group's in its job snapshot; a group stored before reschedule
 * policies existed (no field at all) has its job type's default.
 */
export function allocReschedulePolicy(alloc: Pick<Allocation, "Job" | "TaskGroup">): ReschedulePolicy | null {
  const g = alloc.Job.TaskGroups.find((tg) => tg.Name === alloc.TaskGroup);
  if (!g) return null;
  return g.ReschedulePolicy === undefined ? defaultReschedulePolicy(alloc.Job.Type) : g.ReschedulePolicy;
}

/** Nomad's Allocation.LastEventTime: the latest task FinishedAt, else the alloc's ModifyTime (ns). */
export function allocFailTime(alloc: Pick<Allocation, "TaskStates" | "ModifyTime">): number {
  let latest = 0;
  for (const st of Object.values(alloc.TaskStates ?? {})) {
    if (!st.FinishedAt) continue;
    const ms = Date.parse(st.FinishedAt);
    if (Number.isFinite(ms)) latest = Math.max(latest, ms * 1_000_000);
  }
  return latest > 0 ? latest : alloc.ModifyTime;
}

type TrackedAlloc = Pick<Allocation, "RescheduleTracker" | "TaskStates" | "ModifyTime">;

/** Nomad's Allocation.NextDelay: how long the replacement of this alloc waits. */
export function nextDelay(alloc: TrackedAlloc, p: ReschedulePolicy): number {
  const events = alloc.RescheduleTracker?.Events ?? [];
  if (events.length === 0) return p.Delay;
  const last = events[events.length - 1]!;
  let d: number;
  if (p.DelayFunction === "exponential") d = last.Delay * 2;
  else if (p.DelayFunction === "fibonacci") {
    if (events.length < 2) d = p.Delay;
    else {
      const n2 = events[events.length - 2]!.Delay;
      // A series that hit the ceiling and was reset starts again from Delay.
      d = n2 === p.MaxDelay && last.Delay === p.Delay ? last.Delay : last.Delay + n2;
    }
  } else return p.Delay;
  if (p.MaxDelay > 0 && d > p.MaxDelay) {
    d = p.MaxDelay;
    if (allocFailTime(alloc) - last.RescheduleTime > d) d = p.Delay;
  }
  return d;
}

/** Reschedule events of the tracker within Interval of `failTime` (Nomad's rescheduleInfo). */
export function attemptsWithin(
  alloc: Pick<Allocation, "RescheduleTracker">,
  p: ReschedulePolicy,
  failTime: number,
): number {
  if (p.Attempts <= 0) return 0;
  return (alloc.RescheduleTracker?.Events ?? []).filter((e) => failTime - e.RescheduleTime < p.Interval)
    .length;
}

export interface NextReschedule {
  /** Unix nanoseconds on or after which the alloc may be replaced. */
  time: number;
  delay: number;
  eligible: boolean;
  /** The attempt this would be, and how many the policy allows in its interval (0: unlimited). */
  attempt: number;
  attempts: number;
}

/**
 * Nomad's Allocation.NextRescheduleTime, for a failed alloc the server still wants to run; null for
 * any other alloc or when its policy is disabled.
 */
export function nextReschedule(
  alloc: TrackedAlloc & Pick<Allocation, "ClientStatus" | "DesiredStatus" | "Job" | "TaskGroup">,
): NextReschedule | null {
  const p = allocReschedulePolicy(alloc);
  if (alloc.DesiredStatus !== "run" || alloc.ClientStatus !== "failed" || !rescheduleEnabled(p)) return null;
  const failTime = allocFailTime(alloc);
  const delay = nextDelay(alloc, p);
  if (p.Unlimited) return { time: failTime + delay, delay, eligible: true, attempt: 0, attempts: 0 };
  const attempted = attemptsWithin(alloc, p, failTime);
  const first = (alloc.RescheduleTracker?.Events ?? []).length === 0;
  return {
    time: failTime + delay,
    delay,
    eligible: first || (attempted < p.Attempts && delay < p.Interval),
    attempt: attempted + 1,
    attempts: p.Attempts,
  };
}

export type RescheduleDecision =
  { kind: "no" } | { kind: "now"; delay: number } | { kind: "later"; time: number; delay: number };

/**
 * What the reconciler does with a failed alloc at `now` (Nomad's updateByReschedulable): replace it
 * now when `runningEvalId` is the follow-up eval it waits for, or its time is within the window;
 * later when eligible but not yet due; never when the policy refuses.
 */
export function rescheduleDecision(
  alloc: Parameters<typeof nextReschedule>[0] & Pick<Allocation, "FollowupEvalID">,
  now: number,
  runningEvalId: string,
): RescheduleDecision {
  const next = nextReschedule(alloc);
  if (!next || !next.eligible) return { kind: "no" };
  const due =
    (runningEvalId !== "" && alloc.FollowupEvalID === runningEvalId) ||
    next.time - now <= RESCHEDULE_WINDOW_NS;
  return due ? { kind: "now", delay: next.delay } : { kind: "later", time: next.time, delay: next.delay };
}

/** The tracker of the alloc replacing `prev` at `now` (Nomad's updateRescheduleTracker). */
export function trackerForReplacement(
  prev: Parameters<typeof nextReschedule>[0] & Pick<Allocation, "ID" | "NodeID">,
  now: number,
): RescheduleTracker {
  const p = allocReschedulePolicy(prev);
  const past = prev.RescheduleTracker?.Events ?? [];
  let kept: RescheduleEvent[];
  if (p && p.Attempts > 0) kept = past.filter((e) => p.Interval > 0 && now - e.RescheduleTime <= p.Interval);
  else kept = past.slice(-MAX_PAST_RESCHEDULE_EVENTS);
  const delay = p ? nextDelay(prev, p) : 0;
  return {
    Events: [
      ...kept.map((e) => ({ ...e })),
      { RescheduleTime: now, PrevAllocID: prev.ID, PrevNodeID: prev.NodeID, Delay: delay },
    ],
  };
}

/**
 * Groups due times into follow-up evals as Nomad does: sorted, a batch holds the times within
 * FOLLOWUP_BATCH_WINDOW_NS of its first, and its eval waits until that first time.
 */
export function batchFollowups<T extends { time: number }>(items: T[]): { waitUntil: number; items: T[] }[] {
  const sorted = [...items].sort((a, b) => a.time - b.time);
  const out: { waitUntil: number; items: T[] }[] = [];
  for (const it of sorted) {
    const cur = out.at(-1);
    if (cur && it.time - cur.waitUntil <= FOLLOWUP_BATCH_WINDOW_NS) cur.items.push(it);
    else out.push({ waitUntil: it.time, items: [it] });
  }
  return out;
}

/** Go's time.Duration.String() for nanoseconds: "5s", "1m30s", "24h0m0s", "1.5s", "250ms". */
export function goDuration(ns: number): string {
  if (ns === 0) return "0s";
  const neg = ns < 0;
  let n = Math.abs(Math.round(ns));
  let out: string;
  if (n < NS_PER_S) {
    if (n < 1000) out = `${n}ns`;
    else if (n < 1_000_000) out = `${trim(n / 1000)}µs`;
    else out = `${trim(n / 1_000_000)}ms`;
  } else {
    const h = Math.floor(n / HOUR_NS);
    n -= h * HOUR_NS;
    const m = Math.floor(n / (60 * NS_PER_S));
    n -= m * 60 * NS_PER_S;
    const s = `${trim(n / NS_PER_S)}s`;
    out = h > 0 ? `${h}h${m}m${s}` : m > 0 ? `${m}m${s}` : s;
  }
  return neg ? `-${out}` : out;
}

function trim(x: number): string {
  return String(Number(x.toFixed(9)));
}
