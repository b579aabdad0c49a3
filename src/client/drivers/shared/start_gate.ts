/**
 * The start gate: how the process drivers make a task start idempotent across an agent crash.
 *
 * A task's shell parent is spawned HELD: before it runs the task's command it reads one line from
 * its stdin, a socket whose other end only the agent holds. The agent first learns the process's
 * identity (pid + /proc start time: the TaskHandle), lets the task runner persist that handle in
 * the client state DB, and only then writes "go". So:
 *
 * - the command of a task never runs unless its handle is durable: a restarted agent always knows
 *   every copy that ran (and recovers, adopts or stops it: never starts a second one);
 * - a held process whose agent dies before "go" reads EOF (the kernel closes a dead agent's end)
 *   and exits without running the command; no later agent can ever say "go" to it;
 * - the parent records that it got "go" (its own pid) in the STARTED file beside the task dir
 *   (root-owned, out of the task's reach, like the exit status file) BEFORE it runs the command,
 *   and runs nothing when it cannot. A restarted agent whose persisted handle's process has no
 *   such record knows it never ran the task: it kills it if still alive and starts the task
 *   afresh (see ProcessTable.recover and wait: `notStarted`).
 *
 * Test hook: `BERTH_TEST_PAUSE_DIR` (unset in production: the hook is inert and costs nothing)
 * lets a test stop the agent at each step of a start and kill -9 it there. When set, and the file
 * `<dir>/<task>.at` holds a step name, a start of a task of that name reaching that step writes
 * `<dir>/<task>.<step>` and never continues. Steps: "before-persist" (the process is held, its
 * handle not yet persisted), "before-exec" (persisted, "go" not said), "after-exec" ("go" said:
 * the command runs, the start has not returned). Task names are taken with every character
 * outside [A-Za-z0-9_.-] replaced by "_".
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Writable } from "node:stream";

export type StartStep = "before-persist" | "before-exec" | "after-exec";

/**
 * Where the shell parent records that it was told to run the task (see above). Beside the task
 * dir, never inside it, so the task can neither forge it nor plant a link the root parent follows.
 */
export function startedFileFor(taskDir: string): string {
  return path.join(path.dirname(taskDir), `.${path.basename(taskDir)}.started`);
}

/**
 * The shell statements that hold the parent until the agent says go. Expects
 * `$__berth_started_file` set. Reads stdin (the agent's socket), then points stdin at /dev/null so
 * the task never inherits the agent's socket; exits 125 without running anything on EOF or any
 * other word, or when the STARTED record cannot be written. The record is created exclusively
 * (noclobber; the driver removed it before the spawn), so a link planted there is never followed.
 */
export const AWAIT_GO_SH = `IFS= read -r __berth_go || __berth_go=
exec </dev/null
[ "$__berth_go" = go ] || exit 125
(set -C && printf '%s\\n' "$$" >"$__berth_started_file") || exit 125`;

/** Tells a held parent to run its command. A parent that is already gone makes this a no-op. */
export function sayGo(stdin: Writable | null): void {
  if (!stdin || stdin.destroyed) return;
  stdin.on("error", () => undefined);
  stdin.end("go\n");
}

/** True when the STARTED record names `pid` (an absent file or another pid: never ran). */
export async function ranCommand(startedFile: string, pid: number): Promise<boolean> {
  try {
    return (await fs.readFile(startedFile, "utf8")).trim() === String(pid);
  } catch {
    return false;
  }
}

/** See the test hook above: resolves at once unless a test asked to stop at `step`. */
export async function testPause(step: StartStep, taskName: string): Promise<void> {
  const dir = process.env.BERTH_TEST_PAUSE_DIR;
  if (dir === undefined || dir === "") return;
  const name = taskName.replace(/[^A-Za-z0-9_.-]/g, "_");
  const at = await fs.readFile(path.join(dir, `${name}.at`), "utf8").catch(() => "");
  if (at.trim() !== step) return;
  await fs.writeFile(path.join(dir, `${name}.${step}`), `${process.pid}\n`);
  await new Promise<never>(() => undefined);
}
