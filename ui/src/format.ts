/** How the UI writes numbers, sizes and times: the API's units (bytes, Unix nanoseconds, RFC 3339). */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** 1536 → "1.5 KiB"; 0 → "0 B". */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${UNITS[u] ?? ""}`;
}

/** A Date from Unix nanoseconds, an RFC 3339 string or milliseconds; undefined for Go's zero time. */
export function toDate(
  t: number | string | null | undefined,
  unit: "ns" | "ms" | "s" = "ns",
): Date | undefined {
  if (t === null || t === undefined || t === 0 || t === "") return undefined;
  if (typeof t === "string") {
    if (t.startsWith("0001-01-01")) return undefined;
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  const ms = unit === "ns" ? t / 1e6 : unit === "s" ? t * 1000 : t;
  return new Date(ms);
}

/** "2026-11-24 19:30:05" in the browser's time zone; "–" when there is no time. */
export function when(t: number | string | null | undefined, unit: "ns" | "ms" | "s" = "ns"): string {
  const d = toDate(t, unit);
  if (!d) return "–";
  const p = (x: number) => String(x).padStart(2, "0");
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
  );
}

/** "3m ago", "in 12s"; "–" when there is no time. */
export function ago(t: number | string | null | undefined, unit: "ns" | "ms" | "s" = "ns"): string {
  const d = toDate(t, unit);
  if (!d) return "–";
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  const a = Math.abs(s);
  const text =
    a < 60
      ? `${a}s`
      : a < 3600
        ? `${Math.floor(a / 60)}m`
        : a < 86400
          ? `${Math.floor(a / 3600)}h`
          : `${Math.floor(a / 86400)}d`;
  return s >= 0 ? `${text} ago` : `in ${text}`;
}

/** The first 8 characters of a UUID, as Nomad's UI and CLI show IDs. */
export function short(id: string | null | undefined): string {
  return (id ?? "").slice(0, 8);
}

/** "healthy/expected", as Nomad's plugin and volume pages write it. */
export function ratio(healthy: number, expected: number): string {
  return `${healthy}/${expected}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
