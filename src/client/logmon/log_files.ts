/**
 * The names of a task's log files in its logs dir (`<alloc dir>/<task>/logs/`), as Nomad names
 * them: `<task>.stdout.<n>` / `<task>.stderr.<n>`, n counting up from 0 as the collector rotates;
 * and the FIFOs the task writes into, `.<task>.stdout.fifo` / `.<task>.stderr.fifo`, which the
 * collector (logmon) reads. Every listing and open goes through a directory reached without
 * following links (allocdir/no_follow.ts): a task may have planted links in its own dirs.
 */
import fs from "node:fs/promises";
import { openDirNoFollow } from "../allocdir/no_follow.js";

export type LogType = "stdout" | "stderr";

export const LOG_TYPES: readonly LogType[] = ["stdout", "stderr"];

/** `<task>.<type>`: the files' common prefix. */
export function logBase(task: string, type: LogType): string {
  return `${task}.${type}`;
}

export function logFileName(task: string, type: LogType, index: number): string {
  return `${logBase(task, type)}.${index}`;
}

export function fifoName(task: string, type: LogType): string {
  return `.${logBase(task, type)}.fifo`;
}

/** The path of `name` in the directory open as `dir`, resolved by the kernel through the fd. */
export function atDir(dir: fs.FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Indexes below this are taken as written; a name past it is not one of ours. */
const MAX_INDEX = 1e9;

/** The index of `name` when it is `<base>.<n>` (n written plainly, no sign or leading zero), else null. */
export function indexOf(base: string, name: string): number | null {
  if (!name.startsWith(`${base}.`)) return null;
  const rest = name.slice(base.length + 1);
  if (!/^(0|[1-9]\d*)$/.test(rest)) return null;
  const n = Number(rest);
  return n < MAX_INDEX ? n : null;
}

/** The indexes of `<base>.<n>` files in the open directory `dir`, ascending. */
export async function indexesIn(dir: fs.FileHandle, base: string): Promise<number[]> {
  const names = await fs.readdir(`/proc/self/fd/${dir.fd}`);
  return names
    .map((n) => indexOf(base, n))
    .filter((n): n is number => n !== null)
    .sort((a, b) => a - b);
}

/** The indexes of `<base>.<n>` in `anchor/rel…` (no links followed); [] when the dir is missing. */
export async function listIndexes(anchor: string, rel: readonly string[], base: string): Promise<number[]> {
  let dir: fs.FileHandle;
  try {
    dir = await openDirNoFollow(anchor, rel);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  try {
    return await indexesIn(dir, base);
  } finally {
    await dir.close();
  }
}
