/**
 * What a task's cgroup says it uses (`alloc status -stats`), read as Nomad's executor reads it:
 *
 * - v2: memory.current (Usage), memory.stat `anon` (RSS) and `file` (Cache), memory.swap.current
 *   (Swap), memory.peak (Max Usage, Linux 5.19+); cpu.stat `usage_usec`, `user_usec`,
 *   `system_usec`, `nr_throttled`, `throttled_usec`.
 * - v1: memory.usage_in_bytes, memory.max_usage_in_bytes, memory.stat `rss`/`cache`/`swap`,
 *   memory.kmem.*; cpu.stat `nr_throttled`, `throttled_time`. berth's v1 task cgroups have no
 *   cpuacct directory, so `cpu` is null there: the caller counts the CPU time of the cgroup's
 *   processes (`pids`) from /proc.
 *
 * A file the kernel does not offer leaves its field 0 and out of `Measured`.
 */
import type { MemoryStats } from "../../../../structs/resource_usage.js";
import { type CgroupUsage, readControl, readKeyedMap } from "./cgroup_fs.js";
import type { V1Controller } from "./detect.js";

export async function v2Usage(dir: string): Promise<CgroupUsage> {
  const [current, stat, swap, peak, cpuStat, procs] = await Promise.all([
    optNumber(dir, "memory.current"),
    readKeyedMap(dir, "memory.stat"),
    optNumber(dir, "memory.swap.current"),
    optNumber(dir, "memory.peak"),
    readKeyedMap(dir, "cpu.stat"),
    pidsIn(dir),
  ]);
  const { measured, pick } = measurer();
  const memory: MemoryStats = {
    RSS: pick("RSS", stat.get("anon")),
    Cache: pick("Cache", stat.get("file")),
    Swap: pick("Swap", swap),
    Usage: pick("Usage", current),
    MaxUsage: pick("Max Usage", peak),
    KernelUsage: 0,
    KernelMaxUsage: 0,
    Measured: measured,
  };
  const usage = cpuStat.get("usage_usec");
  const throttle = {
    periods: cpuStat.get("nr_throttled") ?? 0,
    timeNs: (cpuStat.get("throttled_usec") ?? 0) * 1000,
    measured: cpuStat.has("nr_throttled"),
  };
  const cpu =
    usage === undefined
      ? null
      : {
          totalNs: usage * 1000,
          userNs: (cpuStat.get("user_usec") ?? 0) * 1000,
          systemNs: (cpuStat.get("system_usec") ?? 0) * 1000,
          throttledPeriods: throttle.periods,
          throttledTimeNs: throttle.timeNs,
          measured: [
            "System Mode",
            "User Mode",
            ...(throttle.measured ? ["Throttled Periods", "Throttled Time"] : []),
            "Percent",
          ],
        };
  return { memory, cpu, throttle, pids: procs };
}

export async function v1Usage(dirs: Partial<Record<V1Controller, string>>): Promise<CgroupUsage> {
  const mem = dirs.memory;
  const [usage, max, stat, kmem, kmemMax, cpuStat, procs] = await Promise.all([
    mem ? optNumber(mem, "memory.usage_in_bytes") : undefined,
    mem ? optNumber(mem, "memory.max_usage_in_bytes") : undefined,
    mem ? readKeyedMap(mem, "memory.stat") : new Map<string, number>(),
    mem ? optNumber(mem, "memory.kmem.usage_in_bytes") : undefined,
    mem ? optNumber(mem, "memory.kmem.max_usage_in_bytes") : undefined,
    dirs.cpu ? readKeyedMap(dirs.cpu, "cpu.stat") : new Map<string, number>(),
    mem ? pidsIn(mem) : Promise.resolve([]),
  ]);
  const { measured, pick } = measurer();
  const memory: MemoryStats = {
    RSS: pick("RSS", stat.get("rss")),
    Cache: pick("Cache", stat.get("cache")),
    Swap: pick("Swap", stat.get("swap")),
    Usage: pick("Usage", usage),
    MaxUsage: pick("Max Usage", max),
    KernelUsage: pick("Kernel Usage", kmem),
    KernelMaxUsage: pick("Kernel Max Usage", kmemMax),
    Measured: measured,
  };
  const throttle = {
    periods: cpuStat.get("nr_throttled") ?? 0,
    timeNs: cpuStat.get("throttled_time") ?? 0,
    measured: cpuStat.has("nr_throttled"),
  };
  return { memory, cpu: null, throttle, pids: procs };
}

/** `pick(name, v)`: v, named in `measured`, or 0 when the kernel did not offer it. */
function measurer(): { measured: string[]; pick: (name: string, v: number | undefined) => number } {
  const measured: string[] = [];
  const pick = (name: string, v: number | undefined): number => {
    if (v === undefined) return 0;
    measured.push(name);
    return v;
  };
  return { measured, pick };
}

/** A control file holding one number; undefined when the kernel does not offer it. */
async function optNumber(dir: string, file: string): Promise<number | undefined> {
  const text = await readControl(dir, file).catch(() => "");
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

async function pidsIn(dir: string): Promise<number[]> {
  const text = await readControl(dir, "cgroup.procs").catch(() => "");
  return text
    .split("\n")
    .filter((l) => /^\d+$/.test(l.trim()))
    .map(Number);
}
