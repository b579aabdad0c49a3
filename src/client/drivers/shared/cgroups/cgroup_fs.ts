/** File-level helpers shared by the v1 and v2 cgroup writers. */
import fs from "node:fs/promises";
import path from "node:path";
import { sleep } from "../../../../internal/abort.js";
import type { MemoryStats } from "../../../../structs/resource_usage.js";
import type { TaskUsageSample } from "../../driver.js";

/** How long destroy() waits for the processes it killed to leave a cgroup. */
const EMPTY_TIMEOUT_MS = 10_000;

/** What a task's cgroup says its processes use (usage.ts reads it). */
export interface CgroupUsage {
  memory: MemoryStats;
  /** Cumulative CPU counters, or null where the cgroup does not count CPU time (v1 here). */
  cpu: TaskUsageSample["cpu"] | null;
  /** Throttling, which v1's cpu controller counts even without cpuacct. */
  throttle: { periods: number; timeNs: number; measured: boolean };
  /** The processes in the cgroup now. */
  pids: number[];
}

/** One task's cgroup, whatever the hierarchy (v1.ts, v2.ts). */
export interface TaskCgroup {
  /** Serialised in the task's handle, so a restarted agent finds the cgroup (cgroupFromState). */
  readonly state: string;
  /** Moves a process (and so everything it forks afterwards) into the cgroup. */
  addPid(pid: number): Promise<void>;
  /** True when the kernel's OOM killer killed a process of the cgroup. */
  oomKilled(): Promise<boolean>;
  /** What its processes use now (usage.ts). */
  usage(): Promise<CgroupUsage>;
  /** SIGKILLs whatever is left in the cgroup, waits for it to empty, and removes it. Idempotent. */
  destroy(): Promise<void>;
}

/** Writes a control file; the error names the file and the value. */
export async function writeControl(dir: string, file: string, value: string): Promise<void> {
  try {
    await fs.writeFile(path.join(dir, file), value);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw Object.assign(
      new Error(`cannot write ${JSON.stringify(value)} to ${path.join(dir, file)}: ${e.code ?? e.message}`),
      {
        code: e.code,
      },
    );
  }
}

/** Writes a control file only when the kernel offers it (optional features: swap accounting). */
export async function writeIfPresent(dir: string, file: string, value: string): Promise<boolean> {
  try {
    await fs.access(path.join(dir, file));
  } catch {
    return false;
  }
  await writeControl(dir, file, value);
  return true;
}

export async function readControl(dir: string, file: string): Promise<string> {
  return (await fs.readFile(path.join(dir, file), "utf8")).trim();
}

/** A flat-keyed control file (`key N` per line: memory.stat, cpu.stat, memory.events) as a map; empty when absent. */
export async function readKeyedMap(dir: string, file: string): Promise<Map<string, number>> {
  const text = await readControl(dir, file).catch(() => "");
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out.set(k, Number(v));
  }
  return out;
}

/** The `key N` value of a flat-keyed control file (memory.events, memory.oom_control); 0 if absent. */
export async function readKeyed(dir: string, file: string, key: string): Promise<number> {
  return (await readKeyedMap(dir, file)).get(key) ?? 0;
}

/** mkdir -p that answers whether it created the last component. */
export async function mkdirOwn(dir: string): Promise<boolean> {
  try {
    await fs.mkdir(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  await fs.mkdir(dir, { recursive: true });
  return true;
}

/**
 * SIGKILLs every process in a cgroup directory until none is left (a directory without
 * cgroup.procs counts as empty). Throws when they do not leave within EMPTY_TIMEOUT_MS.
 */
export async function killAll(dir: string): Promise<void> {
  const deadline = Date.now() + EMPTY_TIMEOUT_MS;
  for (;;) {
    const procs = await readControl(dir, "cgroup.procs").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return "";
      throw err;
    });
    const pids = procs.split("\n").filter((l) => /^\d+$/.test(l));
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone already
      }
    }
    if (Date.now() > deadline)
      throw new Error(`cgroup ${dir} still has processes ${EMPTY_TIMEOUT_MS} ms after SIGKILL`);
    await sleep(20);
  }
}

/** Empties a cgroup directory (killAll) and removes it. A directory already gone is fine. */
export async function killAndRemove(dir: string): Promise<void> {
  const deadline = Date.now() + EMPTY_TIMEOUT_MS;
  for (;;) {
    await killAll(dir);
    try {
      await fs.rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      // EBUSY: a process was still leaving.
      if (code !== "EBUSY" || Date.now() > deadline) throw err;
    }
    await sleep(20);
  }
}

/** Parses a cpuset list ("0-3,6") into sorted core numbers. */
export function parseCpuList(text: string): number[] {
  const out = new Set<number>();
  for (const part of text.trim().split(",")) {
    if (part === "") continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`bad cpu list ${JSON.stringify(text)}`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  return [...out].sort((a, b) => a - b);
}

export function formatCpuList(cores: number[]): string {
  return [...cores].sort((a, b) => a - b).join(",");
}
