/** Go-style durations ("30s", "1h30m", "1.5h", "500ms") as Nomad's specs write them. */
const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/** Nanoseconds in `text`, or undefined when it is not a duration. "0" is the one unitless value. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === "0") return 0;
  if (s === "") return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const m = PART.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * (UNIT_NS[m[2]!] ?? NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}
