/** What the process-based drivers share when launching a task: files, PATH, berth's own root. */
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openAppendNoFollow } from "../../allocdir/no_follow.js";
import { openFifoWriter } from "../../logmon/fifo.js";
import { DEV_NULL } from "../../logmon/log_plan.js";

/**
 * Where the shell parent records the task's exit status: beside the task dir, not inside it, so
 * the task (whose root is the task dir under exec) can neither forge it nor turn it into a symlink
 * that the root-owned parent would write through.
 */
export function statusFileFor(taskDir: string): string {
  return path.join(path.dirname(taskDir), `.${path.basename(taskDir)}.exit_status`);
}

/**
 * Opens the task's log files for appending; the caller closes them once the child has them.
 *
 * Contract: both paths follow AllocDir's layout, `<alloc dir>/<task>/logs/<file>` (task_start.ts
 * builds them with AllocDir.taskLogsDir), or are /dev/null; a `<file>` ending in `.fifo` is a log
 * collector's FIFO (logmon/fifo.ts), anything else a regular file appended to. The task can write to its task dir and its logs dir (under
 * exec they are its `/` and `/logs`) and may have replaced either, or the file, with a symlink to a
 * host path while it ran; the agent opens them as root. So the walk starts at the alloc dir, which
 * no task can replace, and never follows a link below it (allocdir/no_follow.ts): a planted link
 * fails the start with an error naming the path instead of creating or appending to a host file.
 */
export async function openLogs(stdoutPath: string, stderrPath: string): Promise<fs.FileHandle[]> {
  const out = await openLogNoFollow(stdoutPath);
  try {
    return [out, await openLogNoFollow(stderrPath)];
  } catch (err) {
    await out.close();
    throw err;
  }
}

async function openLogNoFollow(logPath: string): Promise<fs.FileHandle> {
  // Logging disabled (logmon/log_plan.ts): the task's output is thrown away.
  if (logPath === DEV_NULL) return fs.open(DEV_NULL, "w");
  const logsDir = path.dirname(logPath);
  const taskDir = path.dirname(logsDir);
  if (!path.isAbsolute(logPath) || path.basename(logsDir) !== "logs") {
    throw new Error(`log path ${JSON.stringify(logPath)} is not <alloc dir>/<task>/logs/<file>`);
  }
  const allocDir = path.dirname(taskDir);
  // The alloc dir and above belong to the agent (no task sees them), so creating them plainly is safe.
  await fs.mkdir(allocDir, { recursive: true });
  const rel = [path.basename(taskDir), "logs"];
  // A log collector's FIFO (log_plan.ts): the task gets its write end, the collector rotates.
  if (logPath.endsWith(".fifo")) return openFifoWriter(allocDir, rel, path.basename(logPath));
  return openAppendNoFollow(allocDir, rel, path.basename(logPath));
}

/** The installed package root: the nearest ancestor of this module that holds package.json. */
export function berthRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error("cannot find berth's package root (no package.json above the driver)");
    dir = up;
  }
}

/** PATH for a task that does not set one: berth's own launcher first, then the usual dirs. */
export function defaultTaskPath(): string {
  return `${path.join(berthRoot(), "bin")}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
}

export function withDefaultPath(env: Record<string, string>): Record<string, string> {
  return env.PATH === undefined ? { ...env, PATH: defaultTaskPath() } : { ...env };
}
