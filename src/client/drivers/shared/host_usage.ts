/**
 * TaskDriver.stats of the drivers whose tasks are host processes (exec, raw_exec): the task's
 * cgroup (recorded in its handle) for memory, and for CPU where it counts it (v2); otherwise the
 * CPU time of the cgroup's processes from /proc. A task without a cgroup (raw_exec without
 * resources) is measured as its process tree: RSS and CPU time only, as Nomad's basic executor.
 */
import { emptyUsage } from "../../../structs/resource_usage.js";
import type { TaskHandle, TaskUsageSample } from "../driver.js";
import { cgroupFromState } from "./cgroups/manager.js";
import { processTree, sumProcs } from "./proc_usage.js";

const CPU_FROM_PROCS = ["System Mode", "User Mode", "Percent"];

/** Now in Unix nanoseconds with sub-millisecond precision. */
export function nowNs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1e6);
}

export async function hostTaskUsage(handle: TaskHandle): Promise<TaskUsageSample> {
  const cg = cgroupFromState(handle.state.cgroup);
  if (!cg) {
    const procs = await sumProcs(await processTree(handle.pid), true);
    return {
      atNs: nowNs(),
      memory: { ...emptyUsage().MemoryStats, RSS: procs.rssBytes, Measured: ["RSS"] },
      cpu: fromProcs(procs, { periods: 0, timeNs: 0, measured: false }),
    };
  }
  const usage = await cg.usage();
  const cpu = usage.cpu ?? fromProcs(await sumProcs(usage.pids, false), usage.throttle);
  return { atNs: nowNs(), memory: usage.memory, cpu };
}

function fromProcs(
  procs: { userNs: number; systemNs: number },
  throttle: { periods: number; timeNs: number; measured: boolean },
): TaskUsageSample["cpu"] {
  return {
    totalNs: procs.userNs + procs.systemNs,
    userNs: procs.userNs,
    systemNs: procs.systemNs,
    throttledPeriods: throttle.periods,
    throttledTimeNs: throttle.timeNs,
    measured: throttle.measured
      ? ["System Mode", "User Mode", "Throttled Periods", "Throttled Time", "Percent"]
      : CPU_FROM_PROCS,
  };
}
