/**
 * Where a new volume of a given size fits, from the capacities the leader measured (capacity.ts).
 * Pure: no I/O, the clock passed in. Used by `volume create` (server/rpc/volume_create_capacity.ts)
 * and meant for the scheduler's feasibility check of an alloc that needs a new volume.
 *
 * Rules:
 * - A segment's verdict is `fits` (last known AvailableBytes ≥ the size, and the plugin's
 *   MaximumVolumeSize, when it gave one, too), `too-small`, or `unknown`. Unknown — never measured,
 *   or stale (now ≥ StaleAt) — is allowed: capacity steers creates away from known-full segments, it
 *   never blocks on missing data.
 * - The entry for segment T is the one measured for exactly T. With none, the entries of finer
 *   segments (a superset of T's key/values, e.g. T = zone=a, entries zone=a,host=n1 and
 *   zone=a,host=n2) decide: T fits if any of them fits or is unknown, is too small if all are.
 *   Coarser entries say nothing of T (unknown).
 * - A size of 0 (no capacity_min: the plugin's default) fits everywhere.
 */
import type { CapacityEntry } from "./capacity.js";
import type { Topology, TopologyRequest } from "./volume.js";

export type CapacityState = "fits" | "too-small" | "unknown";

export interface SegmentVerdict {
  state: CapacityState;
  /** The entry that decided (exact, or the largest finer one); absent when unknown for lack of one. */
  entry?: CapacityEntry;
}

/** A canonical key of a segment (its pairs sorted), so equal segments compare equal. */
export function segmentKey(segments: Record<string, string>): string {
  return JSON.stringify(Object.entries(segments).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `k1=v1,k2=v2` (sorted), or "(all segments)" for the whole plugin: how messages and the CLI name a segment. */
export function segmentLabel(segments: Record<string, string>): string {
  const pairs = Object.entries(segments).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.length === 0 ? "(all segments)" : pairs.map(([k, v]) => `${k}=${v}`).join(",");
}

function contains(outer: Record<string, string>, inner: Record<string, string>): boolean {
  return Object.entries(inner).every(([k, v]) => outer[k] === v);
}

/** One entry's verdict for a volume of `requiredBytes`. */
export function entryState(e: CapacityEntry, requiredBytes: number, nowMs: number): CapacityState {
  if (requiredBytes <= 0) return "fits";
  if (nowMs >= e.StaleAt) return "unknown";
  const max = e.MaximumVolumeSize;
  return e.AvailableBytes >= requiredBytes && (max === null || max <= 0 || max >= requiredBytes)
    ? "fits"
    : "too-small";
}

/** The verdict for segment `segments` (see the file comment). */
export function segmentVerdict(
  entries: readonly CapacityEntry[],
  segments: Record<string, string>,
  requiredBytes: number,
  nowMs: number,
): SegmentVerdict {
  if (requiredBytes <= 0) return { state: "fits" };
  const key = segmentKey(segments);
  const exact = entries.find((e) => segmentKey(e.Segments) === key);
  if (exact) return { state: entryState(exact, requiredBytes, nowMs), entry: exact };
  const finer = entries.filter((e) => contains(e.Segments, segments));
  if (finer.length === 0) return { state: "unknown" };
  const states = finer.map((e) => entryState(e, requiredBytes, nowMs));
  const largest = finer.reduce((a, b) => (b.AvailableBytes > a.AvailableBytes ? b : a));
  if (states.includes("fits")) return { state: "fits", entry: largest };
  if (states.includes("unknown")) return { state: "unknown" };
  return { state: "too-small", entry: largest };
}

/**
 * The segments among `segments` where a new volume of `requiredBytes` may go: those not known to
 * be too small, in the given order. The contract the scheduler's feasibility check calls.
 */
export function segmentsWithCapacity(
  entries: readonly CapacityEntry[],
  segments: readonly Topology[],
  requiredBytes: number,
  nowMs: number,
): Topology[] {
  return segments.filter(
    (t) => segmentVerdict(entries, t.Segments, requiredBytes, nowMs).state !== "too-small",
  );
}

/** What a create should send as its accessibility requirements, or why it cannot go anywhere. */
export type CreatePlacement = { request: TopologyRequest | null } | { refused: string };

/**
 * The topology request a create of `requiredBytes` sends, from the user's `request` and the plugin's
 * measured `entries`:
 * - with Required segments: those not known too small (Preferred filtered the same way); none left
 *   → refused;
 * - without: when some measured segment is known too small, Required (and Preferred, the user's
 *   first) become the measured segments not known too small, largest first; none → refused. When
 *   none is known too small, the request goes as it came.
 * The refusal names every segment considered, with its last known free bytes.
 */
export function placeCreate(
  entries: readonly CapacityEntry[],
  request: TopologyRequest | null,
  requiredBytes: number,
  nowMs: number,
): CreatePlacement {
  if (requiredBytes <= 0 || entries.length === 0) return { request };
  const required = request?.Required ?? [];
  const preferred = request?.Preferred ?? [];
  const ok = (t: Topology) => segmentVerdict(entries, t.Segments, requiredBytes, nowMs).state !== "too-small";
  if (required.length > 0) {
    const kept = required.filter(ok);
    if (kept.length === 0) return { refused: refusal(entries, required, requiredBytes, nowMs) };
    return { request: { Required: kept, Preferred: preferred.filter(ok) } };
  }
  const measured = entries.map((e) => ({ Segments: e.Segments }));
  if (measured.every(ok)) return { request };
  const allowed = measured
    .filter(ok)
    .sort(
      (a, b) =>
        available(entries, b) - available(entries, a) || cmp(segmentKey(a.Segments), segmentKey(b.Segments)),
    );
  if (allowed.length === 0) return { refused: refusal(entries, measured, requiredBytes, nowMs) };
  // A whole-plugin entry ({}) that fits: the request needs no segment.
  if (allowed.some((t) => Object.keys(t.Segments).length === 0)) return { request };
  const firstPreferred = preferred.filter(ok);
  const rest = allowed.filter(
    (t) => !firstPreferred.some((p) => segmentKey(p.Segments) === segmentKey(t.Segments)),
  );
  return { request: { Required: allowed, Preferred: [...firstPreferred, ...rest] } };
}

function available(entries: readonly CapacityEntry[], t: Topology): number {
  return entries.find((e) => segmentKey(e.Segments) === segmentKey(t.Segments))?.AvailableBytes ?? 0;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function refusal(
  entries: readonly CapacityEntry[],
  segments: readonly Topology[],
  requiredBytes: number,
  nowMs: number,
): string {
  const parts = segments.map((t) => {
    const v = segmentVerdict(entries, t.Segments, requiredBytes, nowMs);
    const e = v.entry;
    const age = e ? ` (measured ${Math.max(0, Math.round((nowMs - e.MeasuredAt) / 1000))}s ago)` : "";
    const max =
      e && e.MaximumVolumeSize !== null && e.MaximumVolumeSize > 0 && e.MaximumVolumeSize < requiredBytes
        ? `, largest volume ${e.MaximumVolumeSize} bytes`
        : "";
    return `${segmentLabel(t.Segments)} has ${e ? e.AvailableBytes : "unknown"} bytes available${max}${age}`;
  });
  return `no topology segment has capacity for ${requiredBytes} bytes (capacity_min): ${parts.join("; ")}`;
}
