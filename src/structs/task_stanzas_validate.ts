/**
 * A task's `Lifecycle`, `KillSignal` and `User` in Nomad's JSON, checked as Nomad does
 * (`TaskLifecycleConfig.Validate`'s texts). Pure.
 */
import { validationError } from "./errors.js";
import { checkFields, LIFECYCLE_FIELDS } from "./job_fields.js";
import type { TaskLifecycle } from "./job_stanzas.js";
import { optBool, optObject, optString } from "./json_check.js";

const HOOKS = ["prestart", "poststart", "poststop"] as const;

export function lifecycle(field: string, input: unknown): TaskLifecycle | null {
  const l = optObject(field, input);
  if (!l) return null;
  checkFields(field, l, LIFECYCLE_FIELDS);
  const Hook = optString(`${field}.Hook`, l.Hook, "");
  const Sidecar = optBool(`${field}.Sidecar`, l.Sidecar, false);
  // Nomad's TaskLifecycle.Empty: no hook and no sidecar is a main task.
  if (Hook === "" && !Sidecar) return null;
  if (Hook === "") throw validationError(`${field}.Hook`, "no lifecycle hook provided");
  if (!(HOOKS as readonly string[]).includes(Hook)) {
    throw validationError(`${field}.Hook`, `invalid hook: ${Hook}`);
  }
  return { Hook: Hook as TaskLifecycle["Hook"], Sidecar };
}

/** Linux's signal names, as Nomad's drivers look a kill_signal up (`SIGINT`, …). */
export const SIGNAL_NAMES: readonly string[] = [
  "SIGABRT",
  "SIGALRM",
  "SIGBUS",
  "SIGCHLD",
  "SIGCONT",
  "SIGFPE",
  "SIGHUP",
  "SIGILL",
  "SIGINT",
  "SIGIO",
  "SIGIOT",
  "SIGKILL",
  "SIGPIPE",
  "SIGPROF",
  "SIGPWR",
  "SIGQUIT",
  "SIGSEGV",
  "SIGSTKFLT",
  "SIGSTOP",
  "SIGSYS",
  "SIGTERM",
  "SIGTRAP",
  "SIGTSTP",
  "SIGTTIN",
  "SIGTTOU",
  "SIGURG",
  "SIGUSR1",
  "SIGUSR2",
  "SIGVTALRM",
  "SIGWINCH",
  "SIGXCPU",
  "SIGXFSZ",
];

/** "" (SIGTERM) or a signal name; refused at submit rather than when the task is stopped. */
export function killSignal(field: string, input: unknown): string {
  const s = optString(field, input, "");
  if (s !== "" && !SIGNAL_NAMES.includes(s)) {
    throw validationError(field, `unknown signal ${JSON.stringify(s)} (want a name such as "SIGINT")`);
  }
  return s;
}
