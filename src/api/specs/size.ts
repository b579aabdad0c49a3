/**
 * Byte sizes as Nomad reads a volume spec's `capacity_min`/`capacity_max` (go-humanize v1.0.1's
 * ParseBytes): the leading run of digits and dots is the number (a float, so "1.5GiB" works), the
 * rest, trimmed and lower-cased, is the unit. "KiB"/"Ki" … "EiB"/"Ei" are powers of 1024, "kB"/"k" …
 * "EB"/"E" powers of 1000, "B" and no unit are bytes, so "10GiB", "10G", "10 GB" and "10gb" all
 * parse; the result is truncated to whole bytes. No sign and no leading blanks: "-1G" and " 1G" are
 * not sizes.
 */
const K = 1000;
const KI = 1024;
const UNITS: Record<string, number> = { "": 1, b: 1 };
for (const [i, p] of ["k", "m", "g", "t", "p", "e"].entries()) {
  UNITS[p] = UNITS[`${p}b`] = K ** (i + 1);
  UNITS[`${p}i`] = UNITS[`${p}ib`] = KI ** (i + 1);
}

/** The largest size ParseBytes returns (it fails at 2^64 and above). */
const MAX = 2 ** 64;

/** Why `text` is not a size (go-humanize's reasons), or its bytes. */
export function parseSizeOrReason(text: string): { bytes: number } | { reason: string } {
  const m = /^[0-9.]*/.exec(text)![0];
  const num = /^(\d+\.?\d*|\.\d+)$/.test(m) ? Number(m) : NaN;
  if (Number.isNaN(num)) return { reason: `${JSON.stringify(m)} is not a number` };
  const unit = text.slice(m.length).trim().toLowerCase();
  const mult = UNITS[unit];
  if (mult === undefined) return { reason: `unhandled size name: ${unit}` };
  const bytes = num * mult;
  if (bytes >= MAX) return { reason: `too large: ${text}` };
  return { bytes: Math.floor(bytes) };
}

/** Bytes in `text`, or undefined when it is not a size. */
export function parseSize(text: string): number | undefined {
  const r = parseSizeOrReason(text);
  return "bytes" in r ? r.bytes : undefined;
}
