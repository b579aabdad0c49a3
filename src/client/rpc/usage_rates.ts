/**
 * Pure: a task's usage in Nomad's shape (structs/resource_usage.ts) from two of its driver's
 * samples (TaskDriver.stats). CPU rates are the counters' growth over the wall time between the
 * samples, in percent of one core; without an earlier sample (or with counters that went back: the
 * task restarted, or processes counted from /proc exited) the rates are 0.
 */
import type { TaskResourceUsage } from "../../structs/resource_usage.js";
import type { TaskUsageSample } from "../drivers/driver.js";

export function taskUsageFrom(
  prev: TaskUsageSample | undefined,
  cur: TaskUsageSample,
  mhzPerCore: number,
): TaskResourceUsage {
  const spanNs = prev ? cur.atNs - prev.atNs : 0;
  const rate = (now: number, before: number | undefined): number =>
    spanNs > 0 && before !== undefined && now >= before ? ((now - before) / spanNs) * 100 : 0;
  const percent = rate(cur.cpu.totalNs, prev?.cpu.totalNs);
  return {
    ResourceUsage: {
      MemoryStats: { ...cur.memory, Measured: [...cur.memory.Measured] },
      CpuStats: {
        Percent: percent,
        UserMode: rate(cur.cpu.userNs, prev?.cpu.userNs),
        SystemMode: rate(cur.cpu.systemNs, prev?.cpu.systemNs),
        TotalTicks: (percent / 100) * mhzPerCore,
        ThrottledPeriods: cur.cpu.throttledPeriods,
        ThrottledTime: cur.cpu.throttledTimeNs,
        Measured: [...cur.cpu.measured],
      },
      DeviceStats: [],
    },
    Timestamp: cur.atNs,
    Pids: {},
  };
}
