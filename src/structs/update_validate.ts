/**
 * The `update` stanza in Nomad's JSON (api.UpdateStrategy): the job's block, and each group's
 * merged over it with Nomad's defaults (api/tasks.go TaskGroup.Canonicalize: a group field left
 * unset takes the job's, then the default). A job or group that sets no `update` has none: the
 * scheduler replaces its allocs all at once. Durations are nanoseconds. Nomad's checks
 * (structs.UpdateStrategy.Validate) answer with the field named.
 */
import { validationError } from "./errors.js";
import type { UpdateStrategy } from "./job_stanzas.js";
import { isObject, optBool, optNumber, optOneOf, type JsonObject } from "./json_check.js";

const S = 1_000_000_000;

/** Nomad's DefaultUpdateStrategy (api/jobs.go). */
export const DEFAULT_UPDATE: UpdateStrategy = {
  Stagger: 30 * S,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * S,
  HealthyDeadline: 5 * 60 * S,
  ProgressDeadline: 10 * 60 * S,
  Canary: 0,
  AutoRevert: false,
  AutoPromote: false,
};

const HEALTH_CHECKS = ["checks", "task_states", "manual"] as const;

/**
 * The group's effective strategy: `group` over `job` over the defaults; null when neither is an
 * object. `field` names the group's `Update` for errors.
 */
export function effectiveUpdate(field: string, job: unknown, group: unknown): UpdateStrategy | null {
  if (!isObject(job) && !isObject(group)) return null;
  const j: JsonObject = isObject(job) ? job : {};
  const g: JsonObject = isObject(group) ? group : {};
  const pick = (k: keyof UpdateStrategy) => ((g[k] ?? null) !== null ? g[k] : j[k]);
  const dur = (k: keyof UpdateStrategy) =>
    optNumber(`${field}.${k}`, pick(k), DEFAULT_UPDATE[k] as number, { integer: true, min: 0 });
  const u: UpdateStrategy = {
    Stagger: dur("Stagger"),
    MaxParallel: optNumber(`${field}.MaxParallel`, pick("MaxParallel"), 1, { integer: true, min: 0 }),
    HealthCheck: optOneOf(
      `${field}.HealthCheck`,
      pick("HealthCheck"),
      HEALTH_CHECKS,
      "health check",
      "checks",
    ),
    MinHealthyTime: dur("MinHealthyTime"),
    HealthyDeadline: dur("HealthyDeadline"),
    ProgressDeadline: dur("ProgressDeadline"),
    Canary: optNumber(`${field}.Canary`, pick("Canary"), 0, { integer: true, min: 0 }),
    AutoRevert: optBool(`${field}.AutoRevert`, pick("AutoRevert"), false),
    AutoPromote: optBool(`${field}.AutoPromote`, pick("AutoPromote"), false),
  };
  if (u.MaxParallel === 0) return u;
  if (u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline)
    throw validationError(
      `${field}.MinHealthyTime`,
      "minimum healthy time must be less than healthy deadline",
    );
  if (u.ProgressDeadline > 0 && u.HealthyDeadline > u.ProgressDeadline)
    throw validationError(`${field}.HealthyDeadline`, "healthy deadline must be less than progress deadline");
  if (u.AutoPromote && u.Canary === 0)
    throw validationError(`${field}.AutoPromote`, "auto promote requires a canary count greater than zero");
  return u;
}
