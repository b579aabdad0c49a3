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

const NS_PER_TICK = 1e9 / 100;

export interface ProcSum {
  userNs: number;
  systemNs: number;
  rssBytes: number;
}

/** One process's counters; null when it is gone or unreadable. */
export function parseProcStat(text: string): { ppid: number; utime: number; stime: number } | null {
  // The command name (field 2) is in parentheses and may hold spaces and ')': fields follow the last ')'.
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state): field n is rest[n - 3].
  const num = (field: number): number => Number(rest[field - 3]);
  const out = { ppid: num(4), utime: num(14), stime: num(15) };
  return Object.values(out).every(Number.isFinite) ? out : null;
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

/** `root` and every process descended from it, found by one scan of /proc. */
export async function processTree(root: number): Promise<number[]> {
  const entries = await fs.readdir("/proc").catch(() => [] as string[]);
  const children = new Map<number, number[]>();
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const s = await statOf(Number(e));
        if (!s) return;
        const list = children.get(s.ppid) ?? [];
        list.push(Number(e));
        children.set(s.ppid, list);
      }),
  );
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}
