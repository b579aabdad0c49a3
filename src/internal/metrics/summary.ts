/**
 * The JSON answer of GET /v1/metrics: go-metrics' MetricsSummary, which Nomad's Go client decodes
 * into api.MetricsSummary (api/operator_metrics.go):
 *
 *   { "Timestamp": "2026-11-24 19:06:30 +0000 UTC",          // the interval's start, Go time.String()
 *     "Gauges":   [{ "Name", "Value", "Labels": {…} }],
 *     "Points":   [],                                          // go-metrics' EmitKey: berth emits none
 *     "Counters": [{ "Name", "Count", "Rate", "Sum", "Min", "Max", "Mean", "Stddev", "Labels" }],
 *     "Samples":  [ …the same, timers in milliseconds… ] }
 *
 * Every list is present and never null (go-metrics makes them all); Labels is always an object.
 */
import type { IntervalView, SampledValue } from "./interval_sink.js";

export type { SampledValue } from "./interval_sink.js";

export interface GaugeValue {
  Name: string;
  Value: number;
  Labels: Record<string, string>;
}

export interface PointValue {
  Name: string;
  Points: number[];
}

export interface MetricsSummary {
  Timestamp: string;
  Gauges: GaugeValue[];
  Points: PointValue[];
  Counters: SampledValue[];
  Samples: SampledValue[];
}

export function buildSummary(view: IntervalView, gauges: GaugeValue[]): MetricsSummary {
  return {
    Timestamp: goTimeString(view.start),
    Gauges: [...gauges].sort((a, b) => cmp(gaugeKey(a), gaugeKey(b))),
    Points: [],
    Counters: view.counters,
    Samples: view.samples,
  };
}

/** Go's time.Time.Round(time.Second).UTC().String(), e.g. "2026-11-24 19:06:30 +0000 UTC". */
export function goTimeString(ms: number): string {
  const d = new Date(Math.round(ms / 1000) * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const date = `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
  const time = `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
  return `${date} ${time} +0000 UTC`;
}

function gaugeKey(g: GaugeValue): string {
  let key = g.Name;
  for (const k of Object.keys(g.Labels).sort()) key += `;${k}=${g.Labels[k]}`;
  return key;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
