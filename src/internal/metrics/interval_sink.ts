/**
 * The JSON side of /v1/metrics for counters and timers, as Nomad's go-metrics in-memory sink keeps
 * them: values are aggregated per interval (`in_memory_collection_interval`, 10 s by default), the
 * intervals aligned on the wall clock (start = now truncated to the interval), and the answer shows
 * the most recent *finished* interval, or the current one while it is the only one. Each aggregate
 * is go-metrics' AggregateSample: Count, Sum, Min, Max, the sum of squares (for Stddev) and Rate =
 * Sum / interval seconds. Only two intervals are ever kept (the current and the one before): that
 * is all the endpoint can show, so memory is bounded by the series of two intervals.
 *
 * Cumulative values (what Prometheus scrapes) live in prom-client's registry; this sink is fed the
 * same observations by telemetry.ts.
 */

export interface SampledValue {
  Name: string;
  Count: number;
  Rate: number;
  Sum: number;
  Min: number;
  Max: number;
  Mean: number;
  Stddev: number;
  Labels: Record<string, string>;
}

interface Aggregate {
  name: string;
  labels: Record<string, string>;
  count: number;
  sum: number;
  sumSq: number;
  min: number;
  max: number;
}

interface Interval {
  /** Unix ms of the interval's start. */
  start: number;
  counters: Map<string, Aggregate>;
  samples: Map<string, Aggregate>;
}

export interface IntervalView {
  /** Unix ms of the shown interval's start. */
  start: number;
  counters: SampledValue[];
  samples: SampledValue[];
}

export class IntervalSink {
  private current: Interval | undefined;
  private previous: Interval | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  incr(name: string, labels: Record<string, string>, value: number): void {
    ingest(this.interval().counters, name, labels, value);
  }

  sample(name: string, labels: Record<string, string>, value: number): void {
    ingest(this.interval().samples, name, labels, value);
  }

  /** go-metrics' DisplayMetrics: the last finished interval, or the current one if it is the only one. */
  display(): IntervalView {
    const current = this.interval();
    const shown = this.previous ?? current;
    const rateDenom = this.intervalMs / 1000;
    return {
      start: shown.start,
      counters: format(shown.counters, rateDenom),
      samples: format(shown.samples, rateDenom),
    };
  }

  private interval(): Interval {
    const start = Math.floor(this.now() / this.intervalMs) * this.intervalMs;
    if (this.current?.start === start) return this.current;
    // A clock stepping back starts a new interval too; the older one is dropped as go-metrics does.
    this.previous = this.current;
    this.current = { start, counters: new Map(), samples: new Map() };
    return this.current;
  }
}

/** go-metrics' key: the name, then `;label=value` per label in order, spaces made underscores. */
function keyOf(name: string, labels: Record<string, string>): string {
  let key = name;
  for (const [k, v] of Object.entries(labels)) key += `;${k}=${v}`;
  return key.replaceAll(" ", "_");
}

function ingest(m: Map<string, Aggregate>, name: string, labels: Record<string, string>, v: number): void {
  if (!Number.isFinite(v)) return;
  const key = keyOf(name, labels);
  let agg = m.get(key);
  if (!agg) {
    agg = { name, labels: { ...labels }, count: 0, sum: 0, sumSq: 0, min: v, max: v };
    m.set(key, agg);
  }
  agg.count++;
  agg.sum += v;
  agg.sumSq += v * v;
  if (v < agg.min) agg.min = v;
  if (v > agg.max) agg.max = v;
}

/** Sorted by key, as go-metrics sorts by its hash, so answers are deterministic. */
function format(m: Map<string, Aggregate>, rateDenom: number): SampledValue[] {
  return [...m.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, a]) => ({
      Name: a.name,
      Count: a.count,
      Rate: a.sum / rateDenom,
      Sum: a.sum,
      Min: a.min,
      Max: a.max,
      Mean: a.count === 0 ? 0 : a.sum / a.count,
      Stddev: stddev(a),
      Labels: { ...a.labels },
    }));
}

/** go-metrics' sample standard deviation (0 for fewer than two values; never NaN). */
function stddev(a: Aggregate): number {
  const div = a.count * (a.count - 1);
  if (div === 0) return 0;
  const num = a.count * a.sumSq - a.sum * a.sum;
  return num <= 0 ? 0 : Math.sqrt(num / div);
}
