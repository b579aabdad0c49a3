/**
 * The per-driver schema of a task's `config`, checked at job validation as Nomad checks it against
 * its driver's HCL spec: unknown keys are refused there, not at start on some node. A driver with
 * no schema here (exec, raw_exec) has its config read by the task runner at start. Pure.
 */
import { dockerTaskConfig } from "./docker_config.js";
import type { JsonObject } from "./json_check.js";

/** Throws a validation error naming the field when `config` does not fit `driver`'s schema. */
export function checkDriverConfig(field: string, driver: string, config: JsonObject): void {
  if (driver === "docker") dockerTaskConfig(field, config);
}
