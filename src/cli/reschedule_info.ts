/**
 * What `job status` and `alloc status` say about rescheduling, from the API's data only: Nomad's
 * "Future Rescheduling Attempts" (a failed alloc's pending follow-up eval: when, which attempt,
 * why), failed allocs whose policy has no attempts left, and an alloc's "Reschedule Attempts" /
 * "Reschedule Eligibility" lines.
 */
import type { AllocationListStub, Evaluation, Job, ReschedulePolicy, TaskState } from "../api/index.js";
import { shortId, table } from "./format.js";

const ZERO_TIME = "0001-01-01T00:00:00Z";

/** When a pending delayed eval runs (unix ms), or null. */
export function evalDueMs(ev: Pick<Evaluation, "Status" | "WaitUntil">): number | null {
  if (ev.Status !== "pending" || !ev.WaitUntil || ev.WaitUntil === ZERO_TIME) return null;
  const ms = Date.parse(ev.WaitUntil);
  return Number.isFinite(ms) ? ms : null;
}

/** "4s from now" / "1m5s from now" (Nomad's prettyTimeDiff for a future time); "now" once due. */
export function fromNow(ms: number, nowMs: number): string {
  let secs = Math.round((ms - nowMs) / 1000);
  if (secs <= 0) return "now";
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    const n = Math.floor(secs / size);
    secs -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return `${parts.slice(0, 2).join("")} from now`;
}

/** Seconds-granular Go-style duration for policy text: "1h0m0s", "30s". */
function duration(ns: number): string {
  let s = Math.round(ns / 1e9);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

function policyOf(job: Job | undefined, group: string): ReschedulePolicy | null {
  return job?.TaskGroups.find((g) => g.Name === group)?.ReschedulePolicy ?? null;
}

/** "2/3" (the attempt this would be, of the policy's), "3 (unlimited)", or "" without a policy. */
export function attemptText(
  a: Pick<AllocationListStub, "RescheduleTracker" | "ModifyTime">,
  p: ReschedulePolicy | null,
): string {
  if (!p) return "";
  const events = a.RescheduleTracker?.Events ?? [];
  if (p.Unlimited) return `${events.length + 1} (unlimited)`;
  const within = events.filter((e) => a.ModifyTime - e.RescheduleTime < (p.Interval ?? 0)).length;
  return `${within + 1}/${p.Attempts ?? 0}`;
}

/** Why an alloc failed: its client description, else the newest task event that says so. */
export function failureReason(a: Pick<AllocationListStub, "ClientDescription" | "TaskStates">): string {
  if (a.ClientDescription) return a.ClientDescription;
  const events = Object.values(a.TaskStates ?? {}).flatMap((s: TaskState) => s.Events ?? []);
  events.sort((x, y) => y.Time - x.Time);
  const failing = events.find((e) => e.Details?.fails_task === "true") ?? events[0];
  return failing ? `${failing.Type}: ${failing.DisplayMessage}` : "failed";
}

/**
 * Nomad's "Future Rescheduling Attempts" (Task Group, Eval ID, Eval Time) with the attempt and the
 * failure it answers; then failed allocs that will not be rescheduled because their policy has no
 * attempts left. Empty when neither applies.
 */
export function reschedulingSection(
  job: Job,
  allocs: AllocationListStub[],
  evals: Evaluation[],
  verbose: boolean,
  nowMs: number,
): string[] {
  const pending = new Map(evals.filter((e) => evalDueMs(e) !== null).map((e) => [e.ID, e]));
  const rows = [["Task Group", "Eval ID", "Eval Time", "Attempt", "Failed Alloc", "Reason"]];
  const done: string[][] = [["Task Group", "Failed Alloc", "Policy", "Reason"]];
  const current = allocs.filter(
    (a) => a.ClientStatus === "failed" && a.DesiredStatus === "run" && !a.NextAllocation,
  );
  for (const a of current) {
    const p = policyOf(job, a.TaskGroup);
    const ev = a.FollowupEvalID ? pending.get(a.FollowupEvalID) : undefined;
    if (ev) {
      rows.push([
        a.TaskGroup,
        shortId(ev.ID, verbose),
        fromNow(evalDueMs(ev)!, nowMs),
        attemptText(a, p),
        shortId(a.ID, verbose),
        failureReason(a),
      ]);
    } else if (p && (p.Unlimited || (p.Attempts ?? 0) > 0) && !job.Stop) {
      const allowed = p.Unlimited ? "unlimited" : `${p.Attempts} in ${duration(p.Interval ?? 0)}`;
      done.push([a.TaskGroup, shortId(a.ID, verbose), `no attempts left (${allowed})`, failureReason(a)]);
    }
  }
  const out: string[] = [];
  if (rows.length > 1) out.push("", "Future Rescheduling Attempts", ...table(rows));
  if (done.length > 1 && job.Status === "dead") out.push("", "Not Rescheduled", ...table(done));
  return out;
}

/** Nomad's alloc status lines: "Reschedule Attempts", "Replacement Alloc ID", "Reschedule Eligibility". */
export function allocRescheduleLines(
  a: Pick<
    AllocationListStub,
    "RescheduleTracker" | "ModifyTime" | "NextAllocation" | "FollowupEvalID" | "TaskGroup"
  > & { Job?: Job; PreviousAllocation?: string },
  followup: Evaluation | undefined,
  verbose: boolean,
  nowMs: number,
): [string, string][] {
  const out: [string, string][] = [];
  const p = policyOf(a.Job, a.TaskGroup);
  const events = a.RescheduleTracker?.Events ?? [];
  if (events.length > 0 && p && !p.Unlimited && (p.Attempts ?? 0) > 0) {
    const last = events[events.length - 1]!;
    const within = events.filter((e) => last.RescheduleTime - e.RescheduleTime < (p.Interval ?? 0)).length;
    out.push(["Reschedule Attempts", `${within}/${p.Attempts}`]);
  }
  if (a.PreviousAllocation) out.push(["Previous Alloc ID", shortId(a.PreviousAllocation, verbose)]);
  if (a.NextAllocation) out.push(["Replacement Alloc ID", shortId(a.NextAllocation, verbose)]);
  const due = followup ? evalDueMs(followup) : null;
  if (due !== null) out.push(["Reschedule Eligibility", fromNow(due, nowMs)]);
  return out;
}
