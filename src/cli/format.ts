/** Output formatting in Nomad's style: `Key = Value` blocks, aligned tables, short IDs, "3m ago". */
import { ApiError } from "../api/index.js";

const NAMED_ESCAPES: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
};

/**
 * What a terminal would act on rather than show: C0 controls (ESC starts colour, cursor, title and
 * clear-screen sequences; CR and BS overwrite what was printed; BEL rings), DEL, C1 controls (U+009B
 * is a one-byte CSI), the bidirectional marks, overrides and isolates (they reorder what follows) and
 * the Unicode line and paragraph separators.
 */
function isUnsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * `text` with every character a terminal would act on written as an escape, the way Go's %q shows
 * it (`\x1b`, `\a`, `\r`, `\u202e`), so a name, ID, description, event or error from the server
 * prints as visible text and can never drive the operator's terminal. With `keepLines`, "\n" and
 * "\t" stay as they are (for whole output lines, which the CLI itself may lay out with them);
 * otherwise they are escaped too, so one value stays on one line of a table or a `Key = Value` list.
 * DEL and above are written `\u007f`-style, and JSON.stringify already escapes C0 controls, so
 * `-json` output passed through here is still valid JSON holding the same values.
 */
export function terminalSafe(text: string, keepLines = false): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isUnsafe(code)) continue;
    const c = text[i]!;
    if (keepLines && (c === "\n" || c === "\t")) continue;
    const escaped =
      NAMED_ESCAPES[c] ??
      (code < 0x20 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`);
    out += text.slice(from, i) + escaped;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Aligned columns two spaces apart, the first row being the header; no trailing spaces. Cells are
 * escaped (terminalSafe), so a value from the server can neither drive the terminal nor break the
 * row onto a second line.
 */
export function table(rows: string[][]): string[] {
  const safe = rows.map((row) => row.map((cell) => terminalSafe(cell)));
  const widths: number[] = [];
  for (const row of safe) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return safe.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/** `Key = Value` lines with the `=` aligned; values escaped as table cells are. */
export function kv(pairs: [string, string][]): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)} = ${terminalSafe(v)}`.trimEnd());
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
  // Nomad's zero time.Time (the API's "not yet") reads as none too.
  return s && s !== "0001-01-01T00:00:00Z" ? s : "<none>";
}

/** The one-line description of a failure: the server's words with its status, or the error's message. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError)
    return `Unexpected response code: ${err.status} (${terminalSafe(err.message)})`;
  return terminalSafe(err instanceof Error ? err.message : String(err), true);
}

/** Pretty JSON, as `-json` prints it. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
