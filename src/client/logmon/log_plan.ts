/**
 * Where a task's stdout and stderr go, from its `logs` stanza and driver (pure):
 * - disabled: /dev/null, for every driver (Nomad's `logs { disabled = true }`);
 * - the process drivers (raw_exec, exec): the FIFOs a log collector (logmon) reads and rotates
 *   into `<task>.<type>.<n>`;
 * - others (docker: the agent copies the Engine's log stream itself, drivers/docker/log_stream.ts):
 *   the files `<task>.<type>.0`, written by the driver.
 */
import path from "node:path";
import type { Task } from "../../structs/job.js";
import { logLimits } from "../../structs/log_config.js";
import { fifoName, logFileName } from "./log_files.js";

export type LogPlan =
  { kind: "disabled" } | { kind: "logmon"; maxFiles: number; maxFileBytes: number } | { kind: "files" };

const LOGMON_DRIVERS = new Set(["raw_exec", "exec"]);

export const DEV_NULL = "/dev/null";

export function logPlan(task: Task, driver: string): LogPlan {
  if (task.LogConfig?.Disabled) return { kind: "disabled" };
  if (LOGMON_DRIVERS.has(driver)) return { kind: "logmon", ...logLimits(task.LogConfig) };
  return { kind: "files" };
}

/** The paths the driver opens for the task's stdout and stderr (`logsDir`: AllocDir.taskLogsDir). */
export function taskLogPaths(
  plan: LogPlan,
  logsDir: string,
  task: string,
): { stdoutPath: string; stderrPath: string } {
  if (plan.kind === "disabled") return { stdoutPath: DEV_NULL, stderrPath: DEV_NULL };
  const name = (type: "stdout" | "stderr") =>
    plan.kind === "logmon" ? fifoName(task, type) : logFileName(task, type, 0);
  return { stdoutPath: path.join(logsDir, name("stdout")), stderrPath: path.join(logsDir, name("stderr")) };
}
