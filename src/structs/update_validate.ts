/**
 * `update` blocks in Nomad's JSON → effective UpdateStrategy values, as Nomad's `Job.Canonicalize`
 * and `TaskGroup.Canonicalize` (api package) and `UpdateStrategy.Validate` (its texts) do: the
 * job's block is filled with Nomad's defaults (service and system jobs get the defaults even when
 * they write none); a group's block is merged over the job's, field by field; a group without one
 * inherits the job's unless that is empty. Pure.
 */
import { validationError } from "./errors.js";
import { checkFields, UPDATE_FIELDS } from "./job_fields.js";
import { NS_PER_S, runsToCompletion, type JobType } from "./job.js";
import type { UpdateStrategy } from "./job_stanzas.js";
import { optBool, optNumber, optObject, optString, type JsonObject } from "./json_check.js";
import { goDuration } from "./reschedule.js";

/** Nomad's DefaultUpdateStrategy. */
export function defaultUpdateStrategy(): UpdateStrategy {
  return {
    Stagger: 30 * NS_PER_S,
    MaxParallel: 1,
    HealthCheck: "checks",
    MinHealthyTime: 10 * NS_PER_S,
    HealthyDeadline: 300 * NS_PER_S,
    ProgressDeadline: 600 * NS_PER_S,
    Canary: 0,
    AutoRevert: false,
    AutoPromote: false,
  };
}

const HEALTH_CHECKS = ["checks", "task_states", "manual"];

/** The fields `input` sets, typed, over `base`. */
function over(field: string, u: JsonObject, base: UpdateStrategy): UpdateStrategy {
  checkFields(field, u, UPDATE_FIELDS);
  const int = (k: keyof UpdateStrategy) =>
    optNumber(`${field}.${k}`, u[k], base[k] as number, { integer: true });
  return {
    Stagger: int("Stagger"),
    MaxParallel: int("MaxParallel"),
    HealthCheck: optString(`${field}.HealthCheck`, u.HealthCheck, base.HealthCheck) || base.HealthCheck,
    MinHealthyTime: int("MinHealthyTime"),
    HealthyDeadline: int("HealthyDeadline"),
    ProgressDeadline: int("ProgressDeadline"),
    Canary: int("Canary"),
    AutoRevert: optBool(`${field}.AutoRevert`, u.AutoRevert, base.AutoRevert),
    AutoPromote: optBool(`${field}.AutoPromote`, u.AutoPromote, base.AutoPromote),
  };
}

/** Nomad's UpdateStrategy.Empty: no field set to a non-zero value. */
function isEmpty(u: JsonObject): boolean {
  return Object.values(u).every((v) => v === undefined || v === null || v === 0 || v === "" || v === false);
}

/** The job's effective `Update`: null for batch and sysbatch jobs that write none. */
export function jobUpdate(field: string, type: JobType, input: unknown): UpdateStrategy | null {
  const u = optObject(field, input);
  if (!u) return runsToCompletion(type) ? null : defaultUpdateStrategy();
  return validateUpdate(field, over(field, u, defaultUpdateStrategy()));
}

/** A group's effective `Update` given the job's raw block and the group's. */
export function groupUpdate(
  field: string,
  type: JobType,
  jobInput: unknown,
  input: unknown,
): UpdateStrategy | null {
  const job = jobUpdate("Job.Update", type, jobInput);
  const u = optObject(field, input);
  if (u) return validateUpdate(field, over(field, u, job ?? defaultUpdateStrategy()));
  const jobRaw = optObject("Job.Update", jobInput);
  if (!job || (jobRaw && isEmpty(jobRaw))) return null;
  return job;
}

function validateUpdate(field: string, u: UpdateStrategy): UpdateStrategy {
  const bad = (k: string, msg: string) => validationError(`${field}.${k}`, msg);
  const d = goDuration;
  if (!HEALTH_CHECKS.includes(u.HealthCheck)) {
    throw bad("HealthCheck", `Invalid health check given: ${JSON.stringify(u.HealthCheck)}`);
  }
  if (u.MaxParallel < 0)
    throw bad("MaxParallel", `Max parallel can not be less than zero: ${u.MaxParallel} < 0`);
  if (u.Canary < 0) throw bad("Canary", `Canary count can not be less than zero: ${u.Canary} < 0`);
  if (u.Canary === 0 && u.AutoPromote) {
    throw bad("AutoPromote", "Auto Promote requires a Canary count greater than zero");
  }
  if (u.MinHealthyTime < 0) {
    throw bad("MinHealthyTime", `Minimum healthy time may not be less than zero: ${d(u.MinHealthyTime)}`);
  }
  if (u.HealthyDeadline <= 0) {
    throw bad("HealthyDeadline", `Healthy deadline must be greater than zero: ${d(u.HealthyDeadline)}`);
  }
  if (u.ProgressDeadline < 0) {
    throw bad("ProgressDeadline", `Progress deadline must be zero or greater: ${d(u.ProgressDeadline)}`);
  }
  if (u.MinHealthyTime >= u.HealthyDeadline) {
    throw bad(
      "MinHealthyTime",
      `Minimum healthy time must be less than healthy deadline: ${d(u.MinHealthyTime)} > ${d(u.HealthyDeadline)}`,
    );
  }
  if (u.ProgressDeadline !== 0 && u.HealthyDeadline >= u.ProgressDeadline) {
    throw bad(
      "HealthyDeadline",
      `Healthy deadline must be less than progress deadline: ${d(u.HealthyDeadline)} > ${d(u.ProgressDeadline)}`,
    );
  }
  if (u.Stagger <= 0) throw bad("Stagger", `Stagger must be greater than zero: ${d(u.Stagger)}`);
  return u;
}
