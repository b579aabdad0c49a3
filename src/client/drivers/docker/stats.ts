/**
 * TaskDriver.stats of a docker task: one sample of the Engine's stats (`GET /containers/:id/stats`
 * with `stream=false&one-shot=true`, which answers at once instead of waiting a second for a
 * second sample), mapped as Nomad's docker driver maps it: memory `usage`, `max_usage` (cgroup v1
 * only), `stats.rss`/`cache` (v1) or `anon`/`file` (v2), `swap`; CPU the container's cumulative
 * `total_usage`, `usage_in_usermode`, `usage_in_kernelmode` (ns) and throttling. Rates are the
 * client's (client/rpc/client_alloc_stats.ts), from two samples.
 */
import type Docker from "dockerode";
import type { TaskUsageSample } from "../driver.js";
import { nowNs } from "../shared/host_usage.js";

/** The parts of the Engine's stats answer berth reads (all optional: daemons differ). */
interface EngineStats {
  memory_stats?: { usage?: number; max_usage?: number; stats?: Record<string, number> };
  cpu_stats?: {
    cpu_usage?: { total_usage?: number; usage_in_usermode?: number; usage_in_kernelmode?: number };
    throttling_data?: { throttled_periods?: number; throttled_time?: number };
  };
}

export async function containerUsage(
  docker: Docker,
  id: string,
  signal: AbortSignal,
): Promise<TaskUsageSample> {
  // abortSignal is dockerode's own option (passed to its HTTP request), missing from its typings.
  const opts = { stream: false, "one-shot": true, abortSignal: signal } as {
    stream: false;
    "one-shot": boolean;
  };
  const raw: EngineStats = await docker.getContainer(id).stats(opts);
  return engineStatsToSample(raw, nowNs());
}

/** Pure: the Engine's answer as a sample taken at `atNs`. */
export function engineStatsToSample(raw: EngineStats, atNs: number): TaskUsageSample {
  const mem = raw.memory_stats ?? {};
  const stats = mem.stats ?? {};
  // As Nomad: cgroup v2 daemons report no max_usage and name the counters anon/file.
  const v2 = !mem.max_usage && !!mem.usage;
  const rss = stats.rss ?? stats.anon;
  const cache = stats.cache ?? stats.file;
  const measured = ["RSS", "Cache", "Swap", "Usage", ...(v2 ? [] : ["Max Usage"])];
  const cpu = raw.cpu_stats?.cpu_usage ?? {};
  const throttle = raw.cpu_stats?.throttling_data ?? {};
  return {
    atNs,
    memory: {
      RSS: rss ?? 0,
      Cache: cache ?? 0,
      Swap: stats.swap ?? 0,
      Usage: mem.usage ?? 0,
      MaxUsage: mem.max_usage ?? 0,
      KernelUsage: 0,
      KernelMaxUsage: 0,
      Measured: measured,
    },
    cpu: {
      totalNs: cpu.total_usage ?? 0,
      userNs: cpu.usage_in_usermode ?? 0,
      systemNs: cpu.usage_in_kernelmode ?? 0,
      throttledPeriods: throttle.throttled_periods ?? 0,
      throttledTimeNs: throttle.throttled_time ?? 0,
      measured: ["System Mode", "User Mode", "Throttled Periods", "Throttled Time", "Percent"],
    },
  };
}
