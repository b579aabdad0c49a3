/**
 * How a task's exit (a driver's ExitResult) is told in its "Terminated" event, as Nomad's
 * TaskTerminated reads: `exit_code`, `signal`, `oom_killed` ("true"/"false") and, when there is
 * one, `exit_message`. An OOM kill carries the message "OOM Killed" (Nomad's text for it) and its
 * display message says so, so `alloc status` shows why the task died.
 */
import type { ExitResult } from "./driver.js";

export const OOM_KILLED_MESSAGE = "OOM Killed";

export function terminatedEvent(result: ExitResult): { message: string; details: Record<string, string> } {
  const oom = result.oomKilled === true;
  const exitMessage = result.error ?? (oom ? OOM_KILLED_MESSAGE : undefined);
  const parts = [`Exit Code: ${result.exitCode}`];
  if (result.signal) parts.push(`Signal: ${result.signal}`);
  if (oom) parts.push(`Exit Message: ${JSON.stringify(OOM_KILLED_MESSAGE)}`);
  return {
    message: parts.join(", "),
    details: {
      exit_code: String(result.exitCode),
      signal: result.signal ?? "",
      oom_killed: String(oom),
      ...(exitMessage ? { exit_message: exitMessage } : {}),
    },
  };
}
