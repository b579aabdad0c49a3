/** Output formatting in Nomad's style: `Key = Value` blocks, aligned tables, short IDs, "3m ago". */
import { ApiError } from "../api/index.js";

/** Aligned columns two spaces apart, the first row being the header; no trailing spaces. */
export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/** `Key = Value` lines with the `=` aligned. */
export function kv(pairs: [string, string][]): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)} = ${v}`.trimEnd());
}

/** Nomad shows the first 8 characters of UUIDs unless -verbose. */
export function shortId(id: string, verbose: boolean): string {
  return verbose ? id : id.slice(0, 8);
}

/** An RFC 3339 UTC timestamp (seconds precision) from Unix nanoseconds. */
export function formatTimeNs(ns: number): string {
  if (!ns) return "<none>";
  return new Date(ns / 1e6).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** "1h5m ago" from Unix milliseconds: the two largest units, like Nomad's prettyTimeDiff. */
export function ago(ms: number, nowMs: number): string {
  if (!ms) return "<none>";
  let secs = Math.max(0, Math.round((nowMs - ms) / 1000));
  if (secs === 0) return "just now";
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    const n = Math.floor(secs / size);
    secs -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
  }
  return `${parts
    .slice(0, 2)
    .filter((p) => !p.startsWith("0"))
    .join("")} ago`;
}

/** Bytes in IEC units as go-humanize's IBytes prints them: "0 B", "10 MiB", "1.0 GiB". */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  let v = n;
  let i = -1;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${units[i]}`;
}

export function orNone(s: string | null | undefined): string {
  return s ? s : "<none>";
}

/** The one-line description of a failure: the server's words with its status, or the error's message. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return `Unexpected response code: ${err.status} (${err.message})`;
  return err instanceof Error ? err.message : String(err);
}

/** Pretty JSON, as `-json` prints it. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
