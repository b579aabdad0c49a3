/**
 * The agent config's `telemetry` block, as much of Nomad's as berth honours (command/agent/config.go
 * Telemetry; defaults from DefaultConfig, -dev from DevConfig):
 *
 *   telemetry {
 *     prometheus_metrics            = true   # /v1/metrics?format=prometheus answers (default false; -dev: true)
 *     disable_hostname              = false  # no `host` label on gauges
 *     collection_interval           = "1s"   # gauges are collected at most this often
 *     in_memory_collection_interval = "10s"  # the JSON answer's aggregation interval
 *     metrics_require_acl           = true   # berth's: with ACLs on, /v1/metrics needs agent:read
 *     publish_allocation_metrics    = true   # a node's running tasks' usage as gauges (default false)
 *     publish_node_metrics          = true   # a node's host memory and CPU as gauges (default false)
 *   }
 *
 * Nomad's other settings send metrics elsewhere (statsd, statsite, datadog, circonus) or shape
 * metrics berth does not emit (alloc metadata labels, prefix filters); each is accepted and
 * reported as unused (nomad_config_keys.ts) before this reads the block.
 */
import type { Body } from "../api/specs/body.js";
import { DEFAULT_TELEMETRY, type TelemetrySettings } from "../internal/metrics/telemetry.js";

export interface TelemetrySetting {
  prometheusMetrics?: boolean;
  disableHostname?: boolean;
  collectionIntervalMs?: number;
  inMemoryCollectionIntervalMs?: number;
  metricsRequireAcl?: boolean;
  publishAllocationMetrics?: boolean;
  publishNodeMetrics?: boolean;
}

const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 3_600_000;

export function parseTelemetry(b: Body): TelemetrySetting {
  const out: TelemetrySetting = {};
  const prom = b.bool("prometheus_metrics");
  if (prom !== undefined) out.prometheusMetrics = prom;
  const acl = b.bool("metrics_require_acl");
  if (acl !== undefined) out.metricsRequireAcl = acl;
  const allocs = b.bool("publish_allocation_metrics");
  if (allocs !== undefined) out.publishAllocationMetrics = allocs;
  const node = b.bool("publish_node_metrics");
  if (node !== undefined) out.publishNodeMetrics = node;
  const host = b.bool("disable_hostname");
  if (host !== undefined) out.disableHostname = host;
  const collection = interval(b, "collection_interval");
  if (collection !== undefined) out.collectionIntervalMs = collection;
  const inMemory = interval(b, "in_memory_collection_interval");
  if (inMemory !== undefined) out.inMemoryCollectionIntervalMs = inMemory;
  b.finish();
  return out;
}

function interval(b: Body, key: string): number | undefined {
  const ns = b.duration(key);
  if (ns === undefined) return undefined;
  const ms = ns / 1e6;
  if (ms < MIN_INTERVAL_MS || ms > MAX_INTERVAL_MS) {
    throw b.error(`${key} must be between 100ms and 1h, got ${ms} ms`);
  }
  return Math.round(ms);
}

/** The agent's settings: the file's, else -dev's (Prometheus on, as Nomad's DevConfig), else the defaults. */
export function telemetrySettings(file: TelemetrySetting | undefined, dev: boolean): TelemetrySettings {
  return {
    ...DEFAULT_TELEMETRY,
    prometheusMetrics: file?.prometheusMetrics ?? dev,
    metricsRequireAcl: file?.metricsRequireAcl ?? false,
    publishAllocationMetrics: file?.publishAllocationMetrics ?? false,
    publishNodeMetrics: file?.publishNodeMetrics ?? false,
    ...(file?.disableHostname === undefined ? {} : { disableHostname: file.disableHostname }),
    ...(file?.collectionIntervalMs === undefined ? {} : { collectionIntervalMs: file.collectionIntervalMs }),
    ...(file?.inMemoryCollectionIntervalMs === undefined
      ? {}
      : { inMemoryCollectionIntervalMs: file.inMemoryCollectionIntervalMs }),
  };
}
