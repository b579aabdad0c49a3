/**
 * What an alloc's tasks use now (`GET /v1/client/allocation/:id/stats`, `alloc status -stats`), in
 * Nomad's shapes (api/tasks.go: MemoryStats, CpuStats, ResourceUsage, TaskResourceUsage,
 * AllocResourceUsage). `Measured` names the fields the source really measured ("RSS", "Cache",
 * "Swap", "Usage", "Max Usage", "Kernel Usage", "Kernel Max Usage"; "System Mode", "User Mode",
 * "Throttled Periods", "Throttled Time", "Percent"): a field not named is 0 because it is unknown.
 *
 * CPU: `Percent` is of one core (two busy cores: 200), `SystemMode` and `UserMode` likewise,
 * `TotalTicks` the MHz that amounts to (Percent / 100 × one core's MHz), which `alloc status`
 * shows against the task's `cpu` reservation. Throttled time is in nanoseconds. Timestamps are
 * Unix nanoseconds.
 */

export interface MemoryStats {
  RSS: number;
  Cache: number;
  Swap: number;
  Usage: number;
  MaxUsage: number;
  KernelUsage: number;
  KernelMaxUsage: number;
  Measured: string[];
}

export interface CpuStats {
  SystemMode: number;
  UserMode: number;
  TotalTicks: number;
  ThrottledPeriods: number;
  ThrottledTime: number;
  Percent: number;
  Measured: string[];
}

export interface ResourceUsage {
  MemoryStats: MemoryStats;
  CpuStats: CpuStats;
  /** berth schedules no devices: always empty. */
  DeviceStats: unknown[];
}

export interface TaskResourceUsage {
  ResourceUsage: ResourceUsage;
  Timestamp: number;
  /** Per-process usage where the driver reports it (none does yet: empty). */
  Pids: Record<string, ResourceUsage>;
}

export interface AllocResourceUsage {
  /** The sum of the tasks'. */
  ResourceUsage: ResourceUsage;
  Tasks: Record<string, TaskResourceUsage>;
  Timestamp: number;
}

export function emptyUsage(): ResourceUsage {
  return {
    MemoryStats: {
      RSS: 0,
      Cache: 0,
      Swap: 0,
      Usage: 0,
      MaxUsage: 0,
      KernelUsage: 0,
      KernelMaxUsage: 0,
      Measured: [],
    },
    CpuStats: {
      SystemMode: 0,
      UserMode: 0,
      TotalTicks: 0,
      ThrottledPeriods: 0,
      ThrottledTime: 0,
      Percent: 0,
      Measured: [],
    },
    DeviceStats: [],
  };
}

const MEMORY_FIELDS = ["RSS", "Cache", "Swap", "Usage", "MaxUsage", "KernelUsage", "KernelMaxUsage"] as const;
const CPU_FIELDS = [
  "SystemMode",
  "UserMode",
  "TotalTicks",
  "ThrottledPeriods",
  "ThrottledTime",
  "Percent",
] as const;

/**
 * An alloc's usage: its tasks' summed field by field, `Measured` the union of theirs (Nomad's
 * rollup); its timestamp the latest of theirs (now for an alloc with no task running).
 */
export function allocUsageOf(tasks: Record<string, TaskResourceUsage>, nowNs: number): AllocResourceUsage {
  const total = emptyUsage();
  const memMeasured = new Set<string>();
  const cpuMeasured = new Set<string>();
  let latest = 0;
  for (const t of Object.values(tasks)) {
    const { MemoryStats: m, CpuStats: c } = t.ResourceUsage;
    for (const f of MEMORY_FIELDS) total.MemoryStats[f] += m[f];
    for (const f of CPU_FIELDS) total.CpuStats[f] += c[f];
    m.Measured.forEach((x) => memMeasured.add(x));
    c.Measured.forEach((x) => cpuMeasured.add(x));
    latest = Math.max(latest, t.Timestamp);
  }
  total.MemoryStats.Measured = [...memMeasured];
  total.CpuStats.Measured = [...cpuMeasured];
  return { ResourceUsage: total, Tasks: tasks, Timestamp: latest || nowNs };
}
