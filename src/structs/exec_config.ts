/**
 * The `config` blocks of berth's `exec` and `raw_exec` drivers, checked at job validation as
 * Nomad's HCL specs check them (drivers/exec and drivers/rawexec taskConfigSpec): a key the driver
 * does not know is refused there, naming it, instead of being stored and ignored on some node. Keys
 * Nomad's drivers know that berth's do not implement are refused by name. `command` must be a
 * string and `args` a list of strings; whether `command` is set is the task runner's to say at
 * start (berth's own tests and tools submit driver-only tasks). Pure.
 */
import { validationError } from "./errors.js";
import type { JsonObject } from "./json_check.js";

const SUPPORTED = new Set(["command", "args"]);

/** Nomad's keys berth's drivers do not implement, per driver. */
const NOMAD_ONLY: Record<"exec" | "raw_exec", ReadonlySet<string>> = {
  exec: new Set(["pid_mode", "ipc_mode", "cap_add", "cap_drop"]),
  raw_exec: new Set(["cgroup_v2_override", "cgroup_v1_override", "oom_score_adj", "work_dir"]),
};

export function execTaskConfig(field: string, driver: "exec" | "raw_exec", config: JsonObject): void {
  for (const key of Object.keys(config)) {
    if (SUPPORTED.has(key)) continue;
    if (NOMAD_ONLY[driver].has(key))
      throw validationError(`${field}.${key}`, `is not supported by berth's ${driver} driver`);
    throw validationError(
      `${field}.${key}`,
      `is not an option of the ${driver} driver (it takes command and args)`,
    );
  }
  if (config.command !== undefined && typeof config.command !== "string")
    throw validationError(`${field}.command`, "must be a string");
  if (config.args !== undefined) {
    if (!Array.isArray(config.args)) throw validationError(`${field}.args`, "must be a list of strings");
    config.args.forEach((a, i) => {
      if (typeof a !== "string") throw validationError(`${field}.args[${i}]`, "must be a string");
    });
  }
}
