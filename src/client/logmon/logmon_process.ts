/**
 * The agent's side of a task's log collector (logmon_main.ts): starts it detached (its own
 * session, not the agent's child in any way that matters after an agent restart), records it as
 * `<alloc dir>/.<task>.logmon.json` (pid + start time, beside the task dir so the task can neither
 * forge nor replace it), waits until it reads the FIFOs, and waits for or ends it. A restarted
 * agent finds the collector again through the record (pid + start time, so a recycled pid is never
 * taken for it).
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { sleep } from "../../internal/abort.js";
import { BerthError } from "../../structs/errors.js";
import type { AllocDir } from "../allocdir/alloc_dir.js";
import { berthRoot } from "../drivers/shared/launch.js";
import { isSameLiveProcess, readProcStat } from "../drivers/shared/proc.js";
import { ensureFifo, openFifoProbe } from "./fifo.js";
import { fifoName, LOG_TYPES } from "./log_files.js";

export interface LogmonRecord {
  pid: number;
  /** /proc/<pid>/stat field 22. */
  startTime: string;
}

export interface LogmonLimits {
  maxFiles: number;
  maxFileBytes: number;
}

const POLL_MS = 25;

function recordPath(allocDir: AllocDir, task: string): string {
  const taskDir = allocDir.taskDir(task);
  return path.join(path.dirname(taskDir), `.${path.basename(taskDir)}.logmon.json`);
}

/** The collector's own stderr (its errors, never the task's output), one start's worth. */
function errLogPath(allocDir: AllocDir, task: string): string {
  return recordPath(allocDir, task).replace(/\.json$/, ".log");
}

/** Why the collector stopped, from its stderr: the last line it wrote (capped), or "". */
async function lastError(allocDir: AllocDir, task: string): Promise<string> {
  const text = await fs.readFile(errLogPath(allocDir, task), "utf8").catch(() => "");
  const line = text.trim().split("\n").at(-1) ?? "";
  return line.slice(0, 1000);
}

/** The recorded collector of the task, or null (none, or the record is unreadable). */
export async function readLogmonRecord(allocDir: AllocDir, task: string): Promise<LogmonRecord | null> {
  try {
    const v = JSON.parse(await fs.readFile(recordPath(allocDir, task), "utf8")) as Partial<LogmonRecord>;
    if (
      typeof v.pid === "number" &&
      Number.isInteger(v.pid) &&
      v.pid > 1 &&
      typeof v.startTime === "string"
    ) {
      return { pid: v.pid, startTime: v.startTime };
    }
  } catch {
    // Missing or torn (the agent died while writing it): no collector to find.
  }
  return null;
}

export async function removeLogmonRecord(allocDir: AllocDir, task: string): Promise<void> {
  await fs.rm(recordPath(allocDir, task), { force: true });
}

/**
 * Makes the FIFOs, starts the collector detached and records it. Its stderr goes to
 * `<alloc dir>/.<task>.logmon.log` (its own errors; never the task's output).
 */
export async function startLogmon(
  allocDir: AllocDir,
  task: string,
  limits: LogmonLimits,
): Promise<LogmonRecord> {
  const rel = [task, "logs"];
  for (const type of LOG_TYPES) await ensureFifo(allocDir.root, rel, fifoName(task, type));
  const errLog = await fs.open(errLogPath(allocDir, task), "w", 0o600);
  try {
    const child = spawn(
      process.execPath,
      [
        path.join(berthRoot(), "bin", "berth"),
        "logmon",
        `--alloc-dir=${allocDir.root}`,
        `--task=${task}`,
        `--max-files=${limits.maxFiles}`,
        `--max-file-bytes=${limits.maxFileBytes}`,
      ],
      { detached: true, stdio: ["ignore", "ignore", errLog.fd], cwd: "/" },
    );
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    child.unref();
    const pid = child.pid!;
    const st = await readProcStat(pid);
    if (!st) throw new BerthError("ERR_DRIVER", `log collector (pid ${pid}) exited at once`);
    const rec = { pid, startTime: st.startTime };
    const file = recordPath(allocDir, task);
    await fs.writeFile(`${file}.tmp`, JSON.stringify(rec), { mode: 0o600 });
    await fs.rename(`${file}.tmp`, file);
    return rec;
  } finally {
    await errLog.close();
  }
}

/**
 * Write ends of both FIFOs, once the collector reads them (waited for up to `timeoutMs`). While the
 * caller holds them the collector cannot see end of file, so it is still there when the task's own
 * write ends are opened; the caller closes them once the task has its own.
 */
export async function awaitLogmonReady(
  allocDir: AllocDir,
  task: string,
  rec: LogmonRecord,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<fs.FileHandle[]> {
  const held: fs.FileHandle[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    for (const type of LOG_TYPES) {
      for (;;) {
        try {
          held.push(await openFifoProbe(allocDir.root, [task, "logs"], fifoName(task, type)));
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ENXIO") throw err;
        }
        if (!(await isSameLiveProcess(rec.pid, rec.startTime))) {
          const why = await lastError(allocDir, task);
          throw new BerthError(
            "ERR_DRIVER",
            `task ${task}: the log collector exited before reading its pipes${why ? `: ${why}` : ""}`,
          );
        }
        if (Date.now() > deadline)
          throw new BerthError(
            "ERR_DRIVER",
            `task ${task}: the log collector did not open its pipes in ${timeoutMs} ms`,
          );
        await sleep(POLL_MS, signal);
      }
    }
    return held;
  } catch (err) {
    await Promise.all(held.map((h) => h.close()));
    throw err;
  }
}

/** Waits up to `timeoutMs` for the collector to exit; true when it has. */
export async function waitLogmonExit(
  rec: LogmonRecord,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isSameLiveProcess(rec.pid, rec.startTime)) {
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS, signal);
  }
  return true;
}

/**
 * Ends the collector: first `graceMs` to finish on its own (it drains what is in the pipes and
 * exits once every writer has closed), then SIGKILL — a process that inherited the task's stdout
 * still holds it, and two collectors must never append to the same files.
 */
export async function retireLogmon(rec: LogmonRecord, graceMs: number, signal?: AbortSignal): Promise<void> {
  if (await waitLogmonExit(rec, graceMs, signal)) return;
  try {
    process.kill(rec.pid, "SIGKILL");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
  await waitLogmonExit(rec, 5_000, signal);
}
