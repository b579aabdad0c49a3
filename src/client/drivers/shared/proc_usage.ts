/**
 * Per-process usage from /proc, for tasks whose cgroup does not count CPU time (v1 without
 * cpuacct) or that have no cgroup (a raw_exec task without resources): `/proc/<pid>/stat`'s
 * utime and stime (clock ticks) and `/proc/<pid>/status`' VmRSS (kB, whatever the page size),
 * summed over the task's processes.
 *
 * Processes that exited take their CPU time with them, so the sum can fall; rates from it are
 * clamped at 0 by the caller. Linux's USER_HZ is 100 on every architecture berth runs on.
 */
import fs from "node:fs/promises";
import { childrenOf, statFields } from "./proc.js";

const NS_PER_TICK = 1e9 / 100;

export interface ProcSum {
  userNs: number;
  systemNs: number;
  rssBytes: number;
}

/** One process's counters from its /proc/<pid>/stat line; null when it cannot be read. */
export function parseProcStat(text: string): { utime: number; stime: number } | null {
  const rest = statFields(text);
  if (!rest) return null;
  const out = { utime: Number(rest[14 - 3]), stime: Number(rest[15 - 3]) };
  return Number.isFinite(out.utime) && Number.isFinite(out.stime) ? out : null;
}

async function statOf(pid: number) {
  const text = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return text ? parseProcStat(text) : null;
}

async function rssOf(pid: number): Promise<number> {
  const text = await fs.readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(text)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/**
 * The summed counters of `pids` (processes gone by now count nothing); `rss` only when asked
 * (a cgroup measures memory better).
 */
export async function sumProcs(pids: number[], withRss: boolean): Promise<ProcSum> {
  const [stats, rss] = await Promise.all([
    Promise.all(pids.map(statOf)),
    withRss ? Promise.all(pids.map(rssOf)) : [],
  ]);
  const sum = { userNs: 0, systemNs: 0, rssBytes: rss.reduce((a, b) => a + b, 0) };
  for (const s of stats) {
    if (!s) continue;
    sum.userNs += s.utime * NS_PER_TICK;
    sum.systemNs += s.stime * NS_PER_TICK;
  }
  return sum;
}

/** `root` and every process descended from it (breadth-first over each one's children). */
export async function processTree(root: number): Promise<number[]> {
  const out: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    out.push(pid);
    queue.push(...(await childrenOf(pid)));
  }
  return out;
}
