/** What the process-based drivers share when launching a task: files, PATH, berth's own root. */
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where the shell parent records the task's exit status: beside the task dir, not inside it, so
 * the task (whose root is the task dir under exec) can neither forge it nor turn it into a symlink
 * that the root-owned parent would write through.
 */
export function statusFileFor(taskDir: string): string {
  return path.join(path.dirname(taskDir), `.${path.basename(taskDir)}.exit_status`);
}

/** Opens the task's log files for appending; the caller closes them once the child has them. */
export async function openLogs(stdoutPath: string, stderrPath: string): Promise<fs.FileHandle[]> {
  await fs.mkdir(path.dirname(stdoutPath), { recursive: true });
  await fs.mkdir(path.dirname(stderrPath), { recursive: true });
  const out = await fs.open(stdoutPath, "a");
  try {
    return [out, await fs.open(stderrPath, "a")];
  } catch (err) {
    await out.close();
    throw err;
  }
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
