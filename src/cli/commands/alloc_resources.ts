/**
 * `alloc status`'s "Task Resources" section, as Nomad prints it: the task's reservation (CPU MHz,
 * memory, the group's disk), with what the task uses now in front of it when the node answered
 * `/v1/client/allocation/:id/stats` ("12/100 MHz", "3.1 MiB/300 MiB"); with `-stats` also the
 * measured memory and CPU fields (only those the driver measured, sorted as Nomad sorts them).
 */
import type { Allocation, AllocResourceUsage, ResourceUsage, Task } from "../../api/index.js";
import { bytes, table } from "../format.js";

const MIB = 1024 * 1024;

export function taskResourceLines(
  alloc: Allocation,
  task: string,
  stats: AllocResourceUsage | undefined,
  displayStats: boolean,
): string[] {
  const group = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
  const spec: Task | undefined = group?.Tasks.find((t) => t.Name === task);
  if (!spec) return [];
  const r = spec.Resources ?? {};
  const usage = stats?.Tasks[task]?.ResourceUsage;
  const cpuHeader = r.Cores ? `CPU (${r.Cores} cores)` : "CPU";
  let cpu = String(r.CPU ?? 100);
  let memory = bytes((r.MemoryMB ?? 300) * MIB);
  if (usage) {
    cpu = `${Math.floor(usage.CpuStats.TotalTicks)}/${cpu}`;
    // RSS first, as Nomad (historical); Usage where RSS was not measured.
    const m = usage.MemoryStats;
    const used = m.RSS === 0 && !m.Measured.includes("RSS") ? m.Usage : m.RSS;
    memory = `${bytes(used)}/${memory}`;
  }
  const disk = Number((group?.EphemeralDisk as { SizeMB?: unknown } | null | undefined)?.SizeMB ?? 300);
  const rows = [
    [cpuHeader, "Memory", "Disk", "Addresses"],
    [`${cpu} MHz`, memory, bytes(disk * MIB), ""],
  ];
  const max = r.MemoryMaxMB;
  if (max && max !== r.MemoryMB) rows.push(["", `Max: ${bytes(max * MIB)}`, "", ""]);
  const lines = ["Task Resources:", ...table(rows)];
  if (usage && displayStats) lines.push("", ...verboseUsageLines(usage));
  return lines;
}

/** The "Memory Stats" and "CPU Stats" tables of `alloc status -stats`. */
export function verboseUsageLines(usage: ResourceUsage): string[] {
  const out: string[] = [];
  const m = usage.MemoryStats;
  const memValue: Record<string, number> = {
    RSS: m.RSS,
    Cache: m.Cache,
    Swap: m.Swap,
    Usage: m.Usage,
    "Max Usage": m.MaxUsage,
    "Kernel Usage": m.KernelUsage,
    "Kernel Max Usage": m.KernelMaxUsage,
  };
  const memNames = [...m.Measured].sort().filter((n) => n in memValue);
  if (memNames.length > 0) {
    out.push("Memory Stats", ...table([memNames, memNames.map((n) => bytes(memValue[n]!))]), "");
  }
  const c = usage.CpuStats;
  const pct = (v: number) => `${v.toFixed(2)}%`;
  const cpuValue: Record<string, string> = {
    Percent: pct(c.Percent),
    "Throttled Periods": String(c.ThrottledPeriods),
    "Throttled Time": String(c.ThrottledTime),
    "User Mode": pct(c.UserMode),
    "System Mode": pct(c.SystemMode),
  };
  const cpuNames = [...c.Measured].sort().filter((n) => n in cpuValue);
  if (cpuNames.length > 0) out.push("CPU Stats", ...table([cpuNames, cpuNames.map((n) => cpuValue[n]!)]));
  return out;
}
