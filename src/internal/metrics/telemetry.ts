/**
 * One agent's metrics (Nomad's telemetry): a prom-client Registry of its own — never prom-client's
 * global default registry, since tests run several agents in one process — and the in-memory
 * interval sink behind the JSON answer of /v1/metrics (interval_sink.ts, summary.ts).
 *
 * Names follow Nomad's: a key such as ["client", "csi", "rpc", "calls"] is `berth.client.csi.rpc.calls`
 * in JSON (go-metrics joins with dots) and `berth_client_csi_rpc_calls` in the Prometheus exposition,
 * with Prometheus' unit conventions on top: counters end in `_total`, timers are histograms in
 * seconds ending in `_seconds` (JSON keeps go-metrics' milliseconds, as Nomad's timers show).
 *
 * Labels are named, and only ever bounded sets (plugin IDs, RPC names, gRPC code names, route
 * templates, claim states): never a raw path, an error message or anything a request carries, so no
 * secret can reach a label. With `disable_hostname` off (Nomad's default) gauges carry a `host`
 * label, as go-metrics' EnableHostnameLabel does.
 *
 * Gauges that describe state (plugin counts, claims, usage) are filled at scrape time by collectors
 * (`collect`), from what the agent already holds in memory or indexes; they run at most once per
 * `collection_interval`, so scrapes in a burst share one collection.
 */
import os from "node:os";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { IntervalSink } from "./interval_sink.js";
import { buildSummary, type GaugeValue, type MetricsSummary } from "./summary.js";

export interface TelemetrySettings {
  /** `prometheus_metrics`: whether `?format=prometheus` answers (Nomad: off, on in -dev). */
  prometheusMetrics: boolean;
  /** `disable_hostname`: no `host` label on gauges. */
  disableHostname: boolean;
  /** The `host` label's value. */
  hostname: string;
  /** `collection_interval`: how often gauges are collected at most (Nomad's default 1 s). */
  collectionIntervalMs: number;
  /** `in_memory_collection_interval`: the JSON answer's aggregation interval (Nomad's 10 s). */
  inMemoryCollectionIntervalMs: number;
  /**
   * `metrics_require_acl` (berth's): with ACLs on, /v1/metrics needs a token with `agent:read`.
   * Off by default, as Nomad serves metrics to anyone; on, the names of volumes and plugins in
   * every namespace stop reaching anonymous scrapers.
   */
  metricsRequireAcl: boolean;
  /** `publish_allocation_metrics`: the node publishes its running tasks' usage (client/alloc_metrics.ts). */
  publishAllocationMetrics: boolean;
  /** `publish_node_metrics`: the node publishes its host's memory and CPU use (client/host_metrics.ts). */
  publishNodeMetrics: boolean;
}

export const DEFAULT_TELEMETRY: Readonly<TelemetrySettings> = {
  prometheusMetrics: false,
  metricsRequireAcl: false,
  publishAllocationMetrics: false,
  publishNodeMetrics: false,
  disableHostname: false,
  hostname: os.hostname(),
  collectionIntervalMs: 1_000,
  inMemoryCollectionIntervalMs: 10_000,
};

export const METRICS_PREFIX = "berth";

type LabelSet<L extends string> = Record<L, string>;

export interface CounterMetric<L extends string> {
  inc(labels: LabelSet<L>, by?: number): void;
}

export interface TimerMetric<L extends string> {
  /** One observation of `ms` milliseconds. */
  observe(labels: LabelSet<L>, ms: number): void;
}

export interface GaugeMetric<L extends string> {
  set(labels: LabelSet<L>, value: number): void;
  /** Replaces every series of the gauge: those not given disappear (a plugin gone, a volume freed). */
  replace(entries: Iterable<[LabelSet<L>, number]>): void;
}

/** Default timer buckets, seconds: a millisecond to five minutes (a blocking query's longest wait). */
export const DEFAULT_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

interface GaugeEntry {
  jsonName: string;
  gauge: Gauge;
}

type Collector = () => void;

export class Telemetry {
  readonly settings: Readonly<TelemetrySettings>;
  private readonly registry = new Registry();
  private readonly sink: IntervalSink;
  private readonly defined = new Map<string, unknown>();
  private readonly gauges: GaugeEntry[] = [];
  private readonly collectors = new Set<Collector>();
  private collectedAt = Number.NEGATIVE_INFINITY;
  private readonly startedAt = Date.now();

  constructor(
    settings: Partial<TelemetrySettings> = {},
    private readonly onCollectError: (err: unknown) => void = () => undefined,
    now: () => number = Date.now,
  ) {
    this.settings = { ...DEFAULT_TELEMETRY, ...settings };
    this.sink = new IntervalSink(this.settings.inMemoryCollectionIntervalMs, now);
    const uptime = this.gauge(["agent", "uptime"], "Seconds since the agent started.", []);
    this.collect(() => uptime.set({}, Math.floor((Date.now() - this.startedAt) / 1000)));
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  counter<L extends string>(key: string[], help: string, labelNames: readonly L[]): CounterMetric<L> {
    return this.once(key, () => {
      const jsonName = jsonNameOf(key);
      const c = new Counter({
        name: `${promNameOf(key)}_total`,
        help,
        labelNames: [...labelNames],
        registers: [this.registry],
      });
      return {
        inc: (labels: LabelSet<L>, by = 1) => {
          c.inc(labels, by);
          this.sink.incr(jsonName, labels, by);
        },
      };
    });
  }

  timer<L extends string>(
    key: string[],
    help: string,
    labelNames: readonly L[],
    bucketsS: readonly number[] = DEFAULT_BUCKETS_S,
  ): TimerMetric<L> {
    return this.once(key, () => {
      const jsonName = jsonNameOf(key);
      const h = new Histogram({
        name: `${promNameOf(key)}_seconds`,
        help,
        labelNames: [...labelNames],
        buckets: [...bucketsS],
        registers: [this.registry],
      });
      return {
        observe: (labels: LabelSet<L>, ms: number) => {
          if (!Number.isFinite(ms) || ms < 0) return;
          h.observe(labels, ms / 1000);
          this.sink.sample(jsonName, labels, ms);
        },
      };
    });
  }

  gauge<L extends string>(key: string[], help: string, labelNames: readonly L[]): GaugeMetric<L> {
    return this.once(key, () => {
      const host = this.settings.disableHostname ? {} : { host: this.settings.hostname };
      const g = new Gauge({
        name: promNameOf(key),
        help,
        labelNames: [...labelNames, ...Object.keys(host)],
        registers: [this.registry],
      });
      this.gauges.push({ jsonName: jsonNameOf(key), gauge: g });
      const set = (labels: LabelSet<L>, value: number) => {
        if (Number.isFinite(value)) g.set({ ...labels, ...host }, value);
      };
      return {
        set,
        replace: (entries: Iterable<[LabelSet<L>, number]>) => {
          g.reset();
          for (const [labels, value] of entries) set(labels, value);
        },
      };
    });
  }

  /**
   * Runs `fn` before a scrape (at most once per collection_interval) to fill gauges; returns the
   * function that removes it (a stopped server's collector must not read its closed store).
   */
  collect(fn: Collector): () => void {
    this.collectors.add(fn);
    this.collectedAt = Number.NEGATIVE_INFINITY;
    return () => {
      this.collectors.delete(fn);
    };
  }

  /** The Prometheus text exposition of every metric. */
  async prometheus(): Promise<string> {
    this.runCollectors();
    return this.registry.metrics();
  }

  /** Nomad's JSON answer (go-metrics' MetricsSummary). */
  async summary(): Promise<MetricsSummary> {
    this.runCollectors();
    const gauges: GaugeValue[] = [];
    for (const { jsonName, gauge } of this.gauges) {
      for (const v of (await gauge.get()).values) {
        const labels: Record<string, string> = {};
        for (const [k, val] of Object.entries(v.labels)) if (val !== undefined) labels[k] = String(val);
        gauges.push({ Name: jsonName, Value: v.value, Labels: labels });
      }
    }
    return buildSummary(this.sink.display(), gauges);
  }

  private runCollectors(): void {
    const now = Date.now();
    if (now - this.collectedAt < this.settings.collectionIntervalMs) return;
    this.collectedAt = now;
    for (const fn of this.collectors) {
      try {
        fn();
      } catch (err) {
        this.onCollectError(err);
      }
    }
  }

  /** Each metric is defined once per agent: a server started again reuses its metrics. */
  private once<T>(key: string[], make: () => T): T {
    const name = jsonNameOf(key);
    const known = this.defined.get(name);
    if (known !== undefined) return known as T;
    const made = make();
    this.defined.set(name, made);
    return made;
  }
}

export function jsonNameOf(key: readonly string[]): string {
  return [METRICS_PREFIX, ...key].join(".");
}

export function promNameOf(key: readonly string[]): string {
  return [METRICS_PREFIX, ...key].join("_");
}
