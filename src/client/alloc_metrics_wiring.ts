/**
 * The node agent's published allocation and node metrics (alloc_metrics.ts, host_metrics.ts)
 * wired to its parts: the running tasks are the alloc sync's runners' tasks with a running handle
 * whose driver can tell its usage; the reservations come from each alloc's AllocatedResources.
 */
import { allocTaskGroup, type Allocation } from "../structs/alloc.js";
import { AllocMetricsPublisher, type SampledTask } from "./alloc_metrics.js";
import type { TaskDriver } from "./drivers/driver.js";
import { hostCoreMhz } from "./fingerprint/resources.js";
import { HostMetrics } from "./host_metrics.js";
import type { ClientOptions } from "./client_options.js";
import type { AllocRunnerLike, AllocSync } from "./alloc_sync.js";

type Sync = Pick<AllocSync, "allocs" | "runner">;

/**
 * Starts the publisher when the agent's telemetry asks for allocation or node metrics (null
 * otherwise); the caller stops it (AllocMetricsPublisher.stop) on shutdown.
 */
export function startAllocMetrics(
  opts: Pick<ClientOptions, "telemetry" | "log" | "datacenter" | "nodeClass">,
  nodeId: string,
  sync: Sync,
  drivers: ReadonlyMap<string, TaskDriver>,
): AllocMetricsPublisher | null {
  const t = opts.telemetry;
  if (!t || (!t.settings.publishAllocationMetrics && !t.settings.publishNodeMetrics)) return null;
  const node = { node_id: nodeId, datacenter: opts.datacenter ?? "dc1", node_class: opts.nodeClass ?? "" };
  let mhz: number | undefined; // read once, as the stats route's sampler does
  const publisher = new AllocMetricsPublisher({
    telemetry: t,
    intervalMs: t.settings.collectionIntervalMs,
    tasks: t.settings.publishAllocationMetrics
      ? () => runningTasks(runnersOf(sync), (n) => drivers.get(n))
      : () => [],
    coreMhz: () => (mhz ??= hostCoreMhz()),
    log: opts.log.child("alloc_metrics"),
    host: t.settings.publishNodeMetrics ? new HostMetrics(t, () => node) : undefined,
  });
  publisher.start();
  return publisher;
}

function runnersOf(sync: Sync): { alloc: Allocation; runner: AllocRunnerLike }[] {
  return [...sync.allocs()].flatMap((a) => sync.runner(a.ID) ?? []);
}

/** The tasks running now on the node whose driver reports usage. */
export function runningTasks(
  runners: Iterable<{ alloc: Allocation; runner: AllocRunnerLike }>,
  driverOf: (name: string) => TaskDriver | undefined,
): SampledTask[] {
  const out: SampledTask[] = [];
  for (const { alloc, runner } of runners) {
    if (!runner.taskRunner) continue;
    for (const { Name: task } of allocTaskGroup(alloc)?.Tasks ?? []) {
      const res = alloc.AllocatedResources?.Tasks[task];
      const handle = runner.taskRunner(task)?.runningHandle?.();
      const driver = handle ? driverOf(handle.driver) : undefined;
      if (!handle || !driver?.stats) continue;
      out.push({
        labels: {
          job: alloc.Job.Name,
          task_group: alloc.TaskGroup,
          alloc_id: alloc.ID,
          task,
          namespace: alloc.Namespace,
        },
        memoryMB: res?.Memory.MemoryMB ?? 0,
        memoryMaxMB: res?.Memory.MemoryMaxMB ?? 0,
        cpuMhz: res?.Cpu.CpuShares ?? 0,
        read: () => driver.stats!(handle),
      });
    }
  }
  return out;
}
