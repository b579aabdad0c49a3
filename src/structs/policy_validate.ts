/**
 * Restart and reschedule policies in Nomad's JSON → effective policies, validated as Nomad's
 * RestartPolicy.Validate and ReschedulePolicy.Validate do. Pure. A field left out inherits from
 * `base`: the job-type default for a group's restart policy, the group's for a task's (Nomad's
 * Task.Canonicalize merges a task block over its group's); the job-type default, then the job's
 * `Reschedule`, for a group's reschedule policy.
 */
import { validationError } from "./errors.js";
import { optBool, optNumber, optObject, optOneOf } from "./json_check.js";
import { NS_PER_S, runsOnEveryNode, runsToCompletion, type JobType, type RestartPolicy } from "./job.js";
import {
  DELAY_FUNCTIONS,
  defaultReschedulePolicy,
  goDuration,
  reschedulePolicyProblems,
  type ReschedulePolicy,
} from "./reschedule.js";

/** Nomad's RestartPolicyMinInterval. */
const RESTART_MIN_INTERVAL_NS = 5 * NS_PER_S;

/**
 * Nomad's DefaultServiceJobRestartPolicy / DefaultBatchJobRestartPolicy (system: service's;
 * sysbatch: batch's, as Nomad's api TaskGroup.Canonicalize gives every other type).
 */
export function defaultRestart(type: JobType): RestartPolicy {
  return runsToCompletion(type)
    ? { Attempts: 3, Interval: 24 * 3600 * NS_PER_S, Delay: 15 * NS_PER_S, Mode: "fail" }
    : { Attempts: 2, Interval: 30 * 60 * NS_PER_S, Delay: 15 * NS_PER_S, Mode: "fail" };
}

const duration = (field: string, v: unknown, dflt: number) =>
  optNumber(field, v, dflt, { integer: true, min: 0 });

/** A restart policy over `base`; null when `input` is absent (the caller then uses `base`). */
export function restartPolicy(field: string, input: unknown, base: RestartPolicy): RestartPolicy | null {
  const r = optObject(field, input);
  if (!r) return null;
  const p: RestartPolicy = {
    Attempts: optNumber(`${field}.Attempts`, r.Attempts, base.Attempts, { integer: true, min: 0 }),
    Interval: duration(`${field}.Interval`, r.Interval, base.Interval),
    Delay: duration(`${field}.Delay`, r.Delay, base.Delay),
    Mode: optOneOf(`${field}.Mode`, r.Mode, ["fail", "delay"] as const, "restart mode", base.Mode),
  };
  if (p.Attempts === 0 && p.Mode !== "fail") {
    throw validationError(`${field}.Mode`, `restart policy "${p.Mode}" with 0 attempts is ambiguous`);
  }
  if (p.Interval < RESTART_MIN_INTERVAL_NS) {
    throw validationError(
      `${field}.Interval`,
      `can not be less than ${goDuration(RESTART_MIN_INTERVAL_NS)} (got ${goDuration(p.Interval)})`,
    );
  }
  if (p.Attempts * p.Delay > p.Interval) {
    throw validationError(
      `${field}.Interval`,
      `cannot restart ${p.Attempts} times in an interval of ${goDuration(p.Interval)} with a delay of ${goDuration(p.Delay)}`,
    );
  }
  return p;
}

/** The fields of a `ReschedulePolicy` object over `base`, unchecked. */
function rescheduleFields(
  field: string,
  r: Record<string, unknown>,
  base: ReschedulePolicy,
): ReschedulePolicy {
  return {
    Attempts: optNumber(`${field}.Attempts`, r.Attempts, base.Attempts, { integer: true, min: 0 }),
    Interval: duration(`${field}.Interval`, r.Interval, base.Interval),
    Delay: duration(`${field}.Delay`, r.Delay, base.Delay),
    DelayFunction: optOneOf(
      `${field}.DelayFunction`,
      r.DelayFunction,
      DELAY_FUNCTIONS,
      "delay function",
      base.DelayFunction,
    ),
    MaxDelay: duration(`${field}.MaxDelay`, r.MaxDelay, base.MaxDelay),
    Unlimited: optBool(`${field}.Unlimited`, r.Unlimited, base.Unlimited),
  };
}

/** Nomad's zero policy for a job type without a default (system): merged fields start from it. */
const ZERO_RESCHEDULE: ReschedulePolicy = {
  Attempts: 0,
  Interval: 0,
  Delay: 0,
  DelayFunction: "constant",
  MaxDelay: 0,
  Unlimited: false,
};

/**
 * The effective reschedule policy of a group: the job-type default, the job's `Reschedule` over
 * it, the group's `ReschedulePolicy` over that. System and sysbatch jobs are never rescheduled and
 * refuse one (Nomad's words).
 */
export function groupReschedulePolicy(
  type: JobType,
  jobLevel: unknown,
  groupField: string,
  groupLevel: unknown,
): ReschedulePolicy | null {
  const job = optObject("Job.Reschedule", jobLevel);
  const group = optObject(groupField, groupLevel);
  if (runsOnEveryNode(type)) {
    const why = "System or sysbatch jobs should not have a reschedule policy";
    if (job) throw validationError("Job.Reschedule", why);
    if (group) throw validationError(groupField, why);
    return null;
  }
  let p = defaultReschedulePolicy(type) ?? ZERO_RESCHEDULE;
  if (job) p = rescheduleFields("Job.Reschedule", job, p);
  if (group) p = rescheduleFields(groupField, group, p);
  const problems = reschedulePolicyProblems(p);
  if (problems.length > 0) throw validationError(group ? groupField : "Job.Reschedule", problems.join("; "));
  return p;
}

/** The job-level `Reschedule` as written (fields checked), kept on the job for round trips. */
export function jobReschedule(type: JobType, input: unknown): ReschedulePolicy | null {
  const r = optObject("Job.Reschedule", input);
  if (!r) return null;
  return rescheduleFields("Job.Reschedule", r, defaultReschedulePolicy(type) ?? ZERO_RESCHEDULE);
}
