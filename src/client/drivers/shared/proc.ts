/**
 * Linux process helpers shared by the process-based drivers. A task is identified by its pid AND
 * its start time (field 22 of /proc/<pid>/stat), so a recycled pid is never mistaken for the task.
 */
import fs from "node:fs/promises";
import os from "node:os";

export interface ProcStat {
  /** Clock ticks since boot; stable for the life of the process, across exec. */
  startTime: string;
  /** Single-letter state; "Z" (zombie) and "X" (dead) count as gone. */
  state: string;
}

/**
 * The fields of a /proc/<pid>/stat line after the command name: field n (1-based, as proc(5)
 * numbers them) is `[n - 3]`. The name (field 2) is in parentheses and may contain spaces or ')',
 * so the fields start after the last ')'. null for a line without one.
 */
export function statFields(text: string): string[] | null {
  const close = text.lastIndexOf(")");
  return close < 0
    ? null
    : text
        .slice(close + 2)
        .trim()
        .split(/\s+/);
}

export async function readProcStat(pid: number): Promise<ProcStat | null> {
  let text: string;
  try {
    text = await fs.readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const rest = statFields(text) ?? [];
  const state = rest[0];
  const startTime = rest[19];
  if (state === undefined || startTime === undefined) return null;
  return { state, startTime };
}

/** True while `pid` is the process that started at `startTime` and has not exited. */
export async function isSameLiveProcess(pid: number, startTime: string): Promise<boolean> {
  const st = await readProcStat(pid);
  return st !== null && st.startTime === startTime && st.state !== "Z" && st.state !== "X";
}

/** The direct children of `pid`, from /proc/<pid>/task/<tid>/children. */
export async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  const tids = await fs.readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of tids) {
    const kids = await fs.readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "");
    for (const k of kids.split(" ").filter(Boolean)) out.push(Number(k));
  }
  return out;
}

/** Signals a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/**
 * Shell convention for a wait status: 128+N means "killed by signal N". The exec and raw_exec
 * drivers learn statuses through a shell parent, so a task that itself exits with 128+N is
 * reported with that signal too; the exit code is always the raw status.
 */
export function resultFromStatus(status: number): { exitCode: number; signal: string | null } {
  if (status > 128 && status < 128 + 65) {
    const name = Object.entries(os.constants.signals).find(([, n]) => n === status - 128)?.[0];
    return { exitCode: status, signal: name ?? null };
  }
  return { exitCode: status, signal: null };
}

export function statusFromSignal(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 0);
}

/** First executable named `name` in the standard system directories (independent of PATH). */
export async function findTool(name: string): Promise<string | null> {
  for (const dir of ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]) {
    const p = `${dir}/${name}`;
    try {
      await fs.access(p, fs.constants.X_OK);
      return p;
    } catch {
      // not in this directory
    }
  }
  return null;
}
