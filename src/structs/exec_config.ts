/**
 * The `config` blocks of berth's `exec` and `raw_exec` drivers, checked at job validation as
 * Nomad's HCL specs check them (drivers/exec and drivers/rawexec taskConfigSpec): a key the driver
 * does not know is refused there, naming it, instead of being stored and ignored on some node. Keys
 * Nomad's drivers know that berth's do not implement are refused by name. `command` is a string
 * and `args` a list of strings; a number or bool there becomes its text, as the driver's HCL spec
 * (cty's conversion to string) makes it in Nomad (`command = 5` runs "5"); a list or object is
 * refused, as cty refuses it. A NUL character is refused: no process can be given one (execve
 * ends each argument at it), where Nomad's task would fail at start instead. Whether `command`
 * is set is the task runner's to say at start (berth's own tests and tools submit driver-only
 * tasks). Pure.
 */
import { validationError } from "./errors.js";
import type { JsonObject } from "./json_check.js";

const SUPPORTED = new Set(["command", "args"]);

/** Nomad's keys berth's drivers do not implement, per driver. */
const NOMAD_ONLY: Record<"exec" | "raw_exec", ReadonlySet<string>> = {
  exec: new Set(["pid_mode", "ipc_mode", "cap_add", "cap_drop"]),
  raw_exec: new Set(["cgroup_v2_override", "cgroup_v1_override", "oom_score_adj", "work_dir"]),
};

/** cty's conversion of a primitive to string, as Nomad's driver specs apply it; else undefined. */
function asText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (typeof v !== "number" || !Number.isFinite(v)) return undefined;
  // cty prints numbers in full, never in exponent form.
  return Number.isInteger(v) ? BigInt(v).toString() : v.toFixed(20).replace(/\.?0+$/, "");
}

function argText(field: string, v: unknown): string {
  const s = asText(v);
  if (s === undefined) throw validationError(field, "must be a string");
  if (s.includes("\0")) throw validationError(field, "must not contain a NUL character");
  return s;
}

/** The config, checked, with `command` and `args` as strings (see above). */
export function execTaskConfig(field: string, driver: "exec" | "raw_exec", config: JsonObject): JsonObject {
  for (const key of Object.keys(config)) {
    if (SUPPORTED.has(key)) continue;
    if (NOMAD_ONLY[driver].has(key))
      throw validationError(`${field}.${key}`, `is not supported by berth's ${driver} driver`);
    throw validationError(
      `${field}.${key}`,
      `is not an option of the ${driver} driver (it takes command and args)`,
    );
  }
  const out: JsonObject = { ...config };
  if (config.command !== undefined) out.command = argText(`${field}.command`, config.command);
  if (config.args !== undefined) {
    if (!Array.isArray(config.args)) throw validationError(`${field}.args`, "must be a list of strings");
    out.args = config.args.map((a, i) => argText(`${field}.args[${i}]`, a));
  }
  return out;
}
