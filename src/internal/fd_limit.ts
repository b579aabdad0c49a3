/**
 * The process's open-file limit, read from /proc/self/limits (Node has no getrlimit; it raises the
 * soft limit to the hard one at start, so the soft limit read here is what the process can use).
 * Every connection, store file, log file and plugin socket takes one descriptor: a server past it
 * cannot open its own database ("unable to open database file") and resets connections, so the
 * server caps its connections below it (server/http/conn_limits.ts) and says so at start.
 */
import fs from "node:fs";

export interface OpenFileLimit {
  soft: number;
  hard: number;
}

/** Parses the "Max open files" line of a /proc/<pid>/limits text; undefined when absent or "unlimited". */
export function parseOpenFileLimit(text: string): OpenFileLimit | undefined {
  const line = text.split("\n").find((l) => l.startsWith("Max open files"));
  const m = line === undefined ? null : /^Max open files\s+(\d+)\s+(\d+)/.exec(line);
  if (!m) return undefined;
  return { soft: Number(m[1]), hard: Number(m[2]) };
}

/** This process's limit; undefined where /proc is not readable (not Linux). */
export function openFileLimit(): OpenFileLimit | undefined {
  try {
    return parseOpenFileLimit(fs.readFileSync("/proc/self/limits", "utf8"));
  } catch {
    return undefined;
  }
}

/** Descriptors kept for the store, logs, plugin sockets and tasks' files: the rest may be connections. */
export function descriptorReserve(soft: number): number {
  return Math.max(256, Math.floor(soft / 8));
}

/** How many connections a process with this soft limit takes at most (0: no cap known). */
export function connectionAllowance(limit: OpenFileLimit | undefined): number {
  if (!limit) return 0;
  return Math.max(16, limit.soft - descriptorReserve(limit.soft));
}
