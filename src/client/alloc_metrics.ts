/**
 * Published allocation metrics (Nomad's `telemetry { publish_allocation_metrics = true }`): while
 * on, the node samples every running task once per `collection_interval` and sets Nomad's gauges
 * (client/allocrunner/taskrunner/task_runner.go setGaugeForMemory, setGaugeForCPU) with berth's
 * prefix, labelled job, task_group, alloc_id, task, namespace (+ host, as every gauge):
 *
 *   berth_client_allocs_memory_{rss,cache,swap,usage,max_usage,kernel_usage,kernel_max_usage}  bytes,
 *     each only when the driver measured it or it is not 0 (Nomad's rule)
 *   berth_client_allocs_memory_allocated, …_max_allocated   bytes reserved (memory, memory_max)
 *   berth_client_allocs_cpu_{total_percent,system,user}     percent of one core
 *   berth_client_allocs_cpu_total_ticks                     MHz used (percent / 100 × one core's MHz)
 *   berth_client_allocs_cpu_{throttled_time,throttled_periods}, berth_client_allocs_cpu_allocated (MHz)
 *
 * CPU rates need two samples: a task's CPU gauges appear from its second tick on (its first would
 * be a made-up 0). Nomad's `total_ticks_count` counter is not kept: a counter's series cannot be
 * dropped when its task stops, and these labels grow with every alloc.
 *
 * Contract: one loop per node, never per request; a tick reads every running task at most once,
 * `CONCURRENCY` at a time, each read bounded by `readTimeoutMs`; ticks never overlap (a slow one
 * delays the next, which then starts on the interval's next beat); each tick REPLACES every series
 * of these gauges, so a task that stopped (or whose alloc is gone) loses its series on the next
 * tick and label sets never grow beyond the tasks running now; stop() ends the loop (AbortSignal),
 * waits for it and clears the series. `host` (publish_node_metrics) is sampled on the same beat.
 */
import { sleep } from "../internal/abort.js";
import type { Logger } from "../internal/log.js";
import type { GaugeMetric, Telemetry } from "../internal/metrics/telemetry.js";
import type { TaskResourceUsage } from "../structs/resource_usage.js";
import type { TaskUsageSample } from "./drivers/driver.js";
import { taskUsageFrom } from "./rpc/usage_rates.js";

export const ALLOC_LABELS = ["job", "task_group", "alloc_id", "task", "namespace"] as const;
export type AllocLabel = (typeof ALLOC_LABELS)[number];
export type AllocLabels = Record<AllocLabel, string>;

/** One task running now: who it is, what its alloc reserved for it, how to read its usage. */
export interface SampledTask {
  labels: AllocLabels;
  memoryMB: number;
  memoryMaxMB: number;
  cpuMhz: number;
  /** The driver's sample (TaskDriver.stats). */
  read(): Promise<TaskUsageSample>;
}

/** A source of other gauges sampled on the same beat (host_metrics.ts). */
export interface BeatSource {
  tick(signal: AbortSignal): Promise<void>;
  clear(): void;
}

export interface AllocMetricsOptions {
  telemetry: Telemetry;
  /** `collection_interval`. */
  intervalMs: number;
  /** The tasks running now (alloc_metrics_wiring.ts); called once per tick. */
  tasks: () => SampledTask[];
  /** One core's MHz (fingerprint/resources.ts hostCoreMhz). */
  coreMhz: () => number;
  log: Logger;
  /** How long one task's read may take before the tick goes on without it (default: 2 intervals, ≥ 5 s). */
  readTimeoutMs?: number;
  /** publish_node_metrics' host sampler; absent: off. */
  host?: BeatSource;
  /** The clock (tests): milliseconds, monotonic. */
  now?: () => number;
}

/** How many task reads run at once in a tick. */
export const CONCURRENCY = 4;

/** One task's usage this tick; `rated` when taken over two samples (CPU rates are real). */
interface Sampled {
  task: SampledTask;
  usage: TaskResourceUsage;
  rated: boolean;
}

type Reading = (s: Sampled) => number | undefined;

/** Each gauge: its key under client.allocs, help, and its value (undefined: no series this tick). */
const MEMORY: [string, string, keyof TaskResourceUsage["ResourceUsage"]["MemoryStats"], string][] = [
  ["rss", "Resident memory of the task, bytes.", "RSS", "RSS"],
  ["cache", "Page cache charged to the task, bytes.", "Cache", "Cache"],
  ["swap", "Swap used by the task, bytes.", "Swap", "Swap"],
  ["usage", "Memory the task's cgroup uses, bytes.", "Usage", "Usage"],
  ["max_usage", "Most memory the task's cgroup used, bytes.", "MaxUsage", "Max Usage"],
  ["kernel_usage", "Kernel memory of the task, bytes.", "KernelUsage", "Kernel Usage"],
  ["kernel_max_usage", "Most kernel memory of the task, bytes.", "KernelMaxUsage", "Kernel Max Usage"],
];

const GAUGES: [string[], string, Reading][] = [
  ...MEMORY.map(([name, help, field, measured]): [string[], string, Reading] => [
    ["memory", name],
    help,
    ({ usage }) => {
      const ms = usage.ResourceUsage.MemoryStats;
      const v = ms[field] as number;
      return v !== 0 || ms.Measured.includes(measured) ? v : undefined;
    },
  ]),
  [
    ["memory", "allocated"],
    "Memory reserved for the task (memory), bytes.",
    ({ task }) => mib(task.memoryMB),
  ],
  [
    ["memory", "max_allocated"],
    "Memory the task may use (memory_max), bytes.",
    ({ task }) => mib(task.memoryMaxMB),
  ],
  [["cpu", "total_percent"], "CPU the task used, percent of one core.", (s) => cpu(s)?.Percent],
  [["cpu", "system"], "CPU the task used in kernel mode, percent of one core.", (s) => cpu(s)?.SystemMode],
  [["cpu", "user"], "CPU the task used in user mode, percent of one core.", (s) => cpu(s)?.UserMode],
  [["cpu", "total_ticks"], "CPU the task used, MHz.", (s) => cpu(s)?.TotalTicks],
  [["cpu", "throttled_time"], "Time the task was throttled, ns.", (s) => cpu(s)?.ThrottledTime],
  [["cpu", "throttled_periods"], "Periods the task was throttled.", (s) => cpu(s)?.ThrottledPeriods],
  [
    ["cpu", "allocated"],
    "CPU reserved for the task, MHz.",
    ({ task }) => (task.cpuMhz > 0 ? task.cpuMhz : undefined),
  ],
];

function mib(mb: number): number | undefined {
  return mb > 0 ? mb * 1024 * 1024 : undefined;
}

/** The CPU stats of a usage taken over two samples; undefined for a first sample (no rate yet). */
function cpu(s: Sampled): TaskResourceUsage["ResourceUsage"]["CpuStats"] | undefined {
  return s.rated ? s.usage.ResourceUsage.CpuStats : undefined;
}

function keyOf(l: AllocLabels): string {
  return `${l.alloc_id}/${l.task}`;
}

export class AllocMetricsPublisher {
  private readonly gauges: [GaugeMetric<AllocLabel>, Reading][];
  private readonly last = new Map<string, TaskUsageSample>();
  private readonly ac = new AbortController();
  private loop: Promise<void> | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: AllocMetricsOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.gauges = GAUGES.map(([key, help, read]) => [
      opts.telemetry.gauge(["client", "allocs", ...key], help, ALLOC_LABELS),
      read,
    ]);
  }

  start(): void {
    this.loop ??= this.run(this.ac.signal);
  }

  /** Ends the loop, waits for a tick in flight, and removes every series. */
  async stop(): Promise<void> {
    this.ac.abort();
    await this.loop;
    this.clear();
  }

  /** One beat: samples every running task (and the host) and replaces the gauges' series. */
  async tick(signal: AbortSignal): Promise<void> {
    const tasks = this.opts.tasks();
    const usages = await this.sampleAll(tasks, signal);
    if (signal.aborted) return;
    const seen = new Set(tasks.map((t) => keyOf(t.labels)));
    for (const k of this.last.keys()) if (!seen.has(k)) this.last.delete(k);
    for (const [gauge, read] of this.gauges) {
      const entries: [AllocLabels, number][] = [];
      for (const s of usages) {
        const v = read(s);
        if (v !== undefined) entries.push([s.task.labels, v]);
      }
      gauge.replace(entries);
    }
    if (this.opts.host) await this.opts.host.tick(signal);
  }

  private clear(): void {
    for (const [gauge] of this.gauges) gauge.replace([]);
    this.opts.host?.clear();
    this.last.clear();
  }

  private async run(signal: AbortSignal): Promise<void> {
    const interval = this.opts.intervalMs;
    while (!signal.aborted) {
      const started = this.now();
      try {
        await this.tick(signal);
      } catch (err) {
        if (!signal.aborted) this.opts.log.warn("publishing allocation metrics failed", { error: err });
      }
      // The next beat: a tick slower than the interval skips the beats it overran, as a ticker.
      const elapsed = this.now() - started;
      await sleep(interval - (elapsed % interval), signal).catch(() => undefined);
    }
  }

  private async sampleAll(tasks: SampledTask[], signal: AbortSignal): Promise<Sampled[]> {
    const out: Sampled[] = [];
    const mhz = this.opts.coreMhz();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (!signal.aborted && next < tasks.length) {
        const t = tasks[next++]!;
        const cur = await this.readBounded(t);
        if (cur === undefined) continue;
        const key = keyOf(t.labels);
        const prev = this.last.get(key);
        this.last.set(key, cur);
        const rated = prev !== undefined && cur.atNs > prev.atNs;
        out.push({ task: t, usage: taskUsageFrom(rated ? prev : undefined, cur, mhz), rated });
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, tasks.length) }, worker));
    return out;
  }

  /** The task's sample, or undefined when it failed (the task stopped) or took too long. */
  private async readBounded(t: SampledTask): Promise<TaskUsageSample | undefined> {
    const limit = this.opts.readTimeoutMs ?? Math.max(2 * this.opts.intervalMs, 5_000);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), limit);
    });
    const read = t.read().catch(() => undefined);
    try {
      return await Promise.race([read, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
