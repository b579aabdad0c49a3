/** Shared set-up for the process driver tests: a temp data dir with one alloc and one task. */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AllocDir } from "../../../src/client/allocdir/alloc_dir.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import type { ExitResult, TaskMount, TaskStartConfig } from "../../../src/client/drivers/driver.js";
import { sleep } from "../../../src/internal/abort.js";

export const run = promisify(execFile);

export interface DriverFixture {
  base: string;
  allocDir: AllocDir;
  cfg(command: string, args: string[], extra?: Partial<TaskStartConfig>): TaskStartConfig;
  readStdout(): Promise<string>;
  /** Unmounts everything below the temp dir (deepest first) and removes it. */
  cleanup(): Promise<void>;
}

export async function makeFixture(prefix: string, task = "web"): Promise<DriverFixture> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
  const allocDir = new AllocDir(base, "a1");
  await allocDir.build([task]);
  const logs = allocDir.taskLogsDir(task);
  return {
    base,
    allocDir,
    cfg: (command, args, extra = {}) => ({
      allocId: "a1",
      taskName: task,
      taskDir: allocDir.taskDir(task),
      allocSharedDir: allocDir.sharedDir,
      command,
      args,
      env: { FOO: "bar" },
      mounts: [] as TaskMount[],
      stdoutPath: path.join(logs, `${task}.stdout.0`),
      stderrPath: path.join(logs, `${task}.stderr.0`),
      ...extra,
    }),
    readStdout: () => fs.readFile(path.join(logs, `${task}.stdout.0`), "utf8"),
    cleanup: async () => {
      for (const m of await mountsUnder(base)) {
        await run("umount", ["-l", m]).catch(() => undefined);
      }
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}

/** Polls until `file` exists (the task signals readiness by writing it). */
export async function waitForFile(file: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fs.access(file);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${file}`);
      await sleep(50);
    }
  }
}

export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  const ac = new AbortController();
  try {
    return await Promise.race([
      p,
      sleep(ms, ac.signal).then(() => {
        throw new Error(`timed out after ${ms}ms: ${what}`);
      }),
    ]);
  } finally {
    ac.abort();
  }
}

export type { ExitResult };
