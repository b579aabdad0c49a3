/**
 * Time values at the API boundary, as Nomad's Go structs encode them. berth stores Unix
 * milliseconds; Nomad's JSON has three forms and each field uses exactly one:
 *   - `time.Time`: an RFC 3339 string, the zero time `0001-01-01T00:00:00Z` when unset (never null);
 *   - Unix seconds (Node.StatusUpdatedAt);
 *   - Unix nanoseconds (`int64` CreateTime/ModifyTime of volumes, plugins and allocs).
 * Conversion happens here only; records keep their stored units.
 */
import { ZERO_TIME } from "../../structs/eval.js";

export { ZERO_TIME };

/** A stored Unix-ms instant (or 0/null/undefined: unset) as Go's time.Time JSON. */
export function goTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms <= 0) return ZERO_TIME;
  return new Date(ms).toISOString();
}

/** Unix ms → Unix seconds (Nomad's Node.StatusUpdatedAt is seconds). */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** Unix ms → Unix nanoseconds (Nomad's int64 CreateTime/ModifyTime); 0 stays 0. */
export function unixNanos(ms: number | undefined): number {
  return ms && ms > 0 ? ms * 1_000_000 : 0;
}
