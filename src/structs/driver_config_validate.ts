/**
 * The per-driver schema of a task's `config`, checked at job validation as Nomad checks it against
 * its driver's HCL spec: unknown keys are refused there, not at start on some node. A driver berth
 * does not have is the scheduler's to refuse ("missing drivers"); its config is not checked. Pure.
 */
import { dockerTaskConfig } from "./docker_config.js";
import { execTaskConfig } from "./exec_config.js";
import type { JsonObject } from "./json_check.js";

/**
 * Throws a validation error naming the field when `config` does not fit `driver`'s schema; returns
 * the config to store (exec's values converted as its spec converts them, exec_config.ts).
 */
export function checkDriverConfig(field: string, driver: string, config: JsonObject): JsonObject {
  if (driver === "docker") dockerTaskConfig(field, config);
  else if (driver === "exec" || driver === "raw_exec") return execTaskConfig(field, driver, config);
  return config;
}
