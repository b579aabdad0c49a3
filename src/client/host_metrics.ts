/**
 * Published node metrics (Nomad's `telemetry { publish_node_metrics = true }`, client/client.go
 * setGaugeForMemoryStats, setGaugeForCPUStats): the host's memory and each CPU's use, sampled on
 * the allocation metrics' beat (alloc_metrics.ts), labelled node_id, datacenter, node_class
 * ("none" when empty, as Nomad) and, for CPUs, `cpu` ("cpu0", …):
 *
 *   berth_client_host_memory_{total,available,used,free}   bytes (/proc/meminfo; used = total − available)
 *   berth_client_host_cpu_{total_percent,user,system,idle} percent of that CPU since the last beat
 *   berth_client_host_cpu_total                            as total_percent (Nomad keeps both)
 *   berth_client_host_cpu_total_ticks                      MHz used (total_percent / 100 × its MHz)
 *
 * CPU gauges appear from the second beat on (a rate needs two readings). Disk, uptime and the
 * `total_ticks_count` counter are not published.
 */
import fs from "node:fs/promises";
import os from "node:os";
import type { GaugeMetric, Telemetry } from "../internal/metrics/telemetry.js";
import type { BeatSource } from "./alloc_metrics.js";

type NodeLabel = "node_id" | "datacenter" | "node_class";
type CpuLabel = NodeLabel | "cpu";
export type NodeLabels = Record<NodeLabel, string>;

/** One CPU's cumulative times (os.cpus(): milliseconds). */
export interface CpuTimes {
  user: number;
  nice: number;
  sys: number;
  idle: number;
  irq: number;
}

export interface CpuPercents {
  total: number;
  user: number;
  system: number;
  idle: number;
}

/** Pure: one CPU's use between two readings, in percent of its time; null when no time passed. */
export function cpuPercents(prev: CpuTimes, cur: CpuTimes): CpuPercents | null {
  const d = (k: keyof CpuTimes) => Math.max(0, cur[k] - prev[k]);
  const all = d("user") + d("nice") + d("sys") + d("idle") + d("irq");
  if (all <= 0) return null;
  const pct = (v: number) => (v / all) * 100;
  return {
    total: pct(all - d("idle")),
    user: pct(d("user") + d("nice")),
    system: pct(d("sys") + d("irq")),
    idle: pct(d("idle")),
  };
}

/** Pure: /proc/meminfo's total, available, free (bytes), and used = total − available (gopsutil's). */
export function parseMeminfo(
  text: string,
): { total: number; available: number; used: number; free: number } | null {
  const kb = (name: string): number | undefined => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kb("MemTotal");
  const free = kb("MemFree");
  if (total === undefined || free === undefined) return null;
  const available = kb("MemAvailable") ?? free;
  return { total, available, used: total - available, free };
}

export interface HostSources {
  cpus: () => { times: CpuTimes; speed: number }[];
  meminfo: () => Promise<string>;
}

const REAL: HostSources = {
  cpus: () => os.cpus(),
  meminfo: () => fs.readFile("/proc/meminfo", "utf8"),
};

export class HostMetrics implements BeatSource {
  private readonly memory: [GaugeMetric<NodeLabel>, "total" | "available" | "used" | "free"][];
  private readonly cpu: [GaugeMetric<CpuLabel>, (p: CpuPercents, mhz: number) => number][];
  private prev: CpuTimes[] | null = null;

  constructor(
    t: Telemetry,
    private readonly labels: () => NodeLabels,
    private readonly sources: HostSources = REAL,
  ) {
    const node: NodeLabel[] = ["node_id", "datacenter", "node_class"];
    const withCpu: CpuLabel[] = [...node, "cpu"];
    this.memory = (["total", "available", "used", "free"] as const).map((k) => [
      t.gauge(["client", "host", "memory", k], `The host's ${k} memory, bytes.`, node),
      k,
    ]);
    const g = (k: string, help: string) => t.gauge(["client", "host", "cpu", k], help, withCpu);
    this.cpu = [
      [g("total", "A CPU's use, percent (as total_percent)."), (p) => p.total],
      [g("total_percent", "A CPU's use, percent."), (p) => p.total],
      [g("total_ticks", "A CPU's use, MHz."), (p, mhz) => (p.total / 100) * mhz],
      [g("user", "A CPU's time in user mode, percent."), (p) => p.user],
      [g("system", "A CPU's time in kernel mode, percent."), (p) => p.system],
      [g("idle", "A CPU's idle time, percent."), (p) => p.idle],
    ];
  }

  async tick(signal: AbortSignal): Promise<void> {
    const labels = { ...this.labels(), node_class: this.labels().node_class || "none" };
    const cpus = this.sources.cpus();
    const prev = this.prev;
    this.prev = cpus.map((c) => c.times);
    const percents = cpus.map((c, i) => {
      const before = prev?.[i];
      return before ? cpuPercents(before, c.times) : null;
    });
    for (const [gauge, value] of this.cpu) {
      const entries: [Record<CpuLabel, string>, number][] = [];
      percents.forEach((p, i) => {
        if (p) entries.push([{ ...labels, cpu: `cpu${i}` }, value(p, cpus[i]!.speed)]);
      });
      gauge.replace(entries);
    }
    const mem = parseMeminfo(await this.sources.meminfo());
    if (signal.aborted) return;
    for (const [gauge, k] of this.memory) gauge.replace(mem ? [[labels, mem[k]]] : []);
  }

  clear(): void {
    for (const [gauge] of [...this.memory, ...this.cpu]) gauge.replace([]);
    this.prev = null;
  }
}
