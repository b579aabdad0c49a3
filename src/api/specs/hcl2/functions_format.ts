/**
 * `format` and `formatlist` (cty's printf-like verbs: %v %#v %t %d %b %o %x %X %e %E %f %g %G %s
 * %q %%, with flags, width, precision and `%[n]` argument indexes), and the time functions
 * `timeadd` and `formatdate` on RFC 3339 timestamps, as cty's stdlib defines them.
 */
import { type Value } from "./ast.js";
import type { HclFunction } from "./evaluate.js";
import { arity, fail } from "./functions_collections.js";
import { numberText, toNum, toStr, typeName } from "./values.js";

const VERB = /%(?:\[(\d+)\])?([-+ 0#]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g;

function pad(s: string, width: number | undefined, flags: string, numeric: boolean): string {
  if (width === undefined || s.length >= width) return s;
  if (flags.includes("-")) return s.padEnd(width);
  if (numeric && flags.includes("0")) {
    const sign = /^[-+ ]/.test(s) ? s[0]! : "";
    return sign + s.slice(sign.length).padStart(width - sign.length, "0");
  }
  return s.padStart(width);
}

function verb(v: Value, c: string, flags: string, prec: number | undefined): string {
  const sign = (n: number, s: string): string =>
    n >= 0 && flags.includes("+") ? `+${s}` : n >= 0 && flags.includes(" ") ? ` ${s}` : s;
  switch (c) {
    case "v":
      if (flags.includes("#")) return JSON.stringify(v);
      return typeof v === "object" && v !== null ? JSON.stringify(v) : v === null ? "null" : toStr(v);
    case "t":
      if (typeof v !== "boolean")
        throw fail(`unsupported value for "%t": bool required, got ${typeName(v)}.`);
      return String(v);
    case "s":
      return toStr(v, "argument for %s");
    case "q":
      return JSON.stringify(toStr(v, "argument for %q"));
    case "d":
    case "b":
    case "o":
    case "x":
    case "X": {
      const n = toNum(v, `argument for %${c}`);
      if (!Number.isInteger(n)) throw fail(`unsupported value for "%${c}": an integer is required.`);
      const radix = { d: 10, b: 2, o: 8, x: 16, X: 16 }[c];
      const s = Math.abs(n).toString(radix);
      return sign(n, (n < 0 ? "-" : "") + (c === "X" ? s.toUpperCase() : s));
    }
    case "e":
    case "E":
    case "f":
    case "g":
    case "G": {
      const n = toNum(v, `argument for %${c}`);
      let s: string;
      if (c === "f") s = n.toFixed(prec ?? 6);
      else if (c === "e" || c === "E") s = n.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, "e$10$2");
      else s = prec === undefined ? numberText(n) : String(Number(n.toPrecision(prec)));
      return sign(n, c === "E" || c === "G" ? s.toUpperCase() : s);
    }
    default:
      throw fail(`unsupported format verb %${c}.`);
  }
}

export function format(fmt: string, args: Value[]): string {
  let next = 0;
  return fmt.replace(
    VERB,
    (_m, idx: string | undefined, flags: string, w: string | undefined, p: string | undefined, c: string) => {
      if (c === "%") return "%";
      const i = idx !== undefined ? Number(idx) - 1 : next;
      next = i + 1;
      if (i >= args.length)
        throw fail(
          `not enough arguments for "%${c}" at ${i + 1}: need index ${i + 1} but have ${args.length} total.`,
        );
      const v = args[i]!;
      if (v === null)
        throw fail(`unsupported value for "%${c}" at ${i + 1}: null value cannot be formatted.`);
      const s = verb(v, c, flags, p === undefined ? undefined : Number(p));
      return pad(s, w === undefined ? undefined : Number(w), flags, "dbxXoeEfgG".includes(c));
    },
  );
}

/** Go's time.ParseDuration units, in milliseconds. */
const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };

function parseGoDuration(s: string): number {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?(?:ns|us|µs|ms|s|m|h))+)$/.exec(s);
  if (!m) throw fail(`invalid duration ${JSON.stringify(s)}.`);
  let total = 0;
  for (const [, n, u] of m[2]!.matchAll(/(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)/g))
    total += Number(n) * UNITS[u!]!;
  return m[1] === "-" ? -total : total;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function parseTime(s: string): Date {
  if (!RFC3339.test(s)) throw fail(`not a valid RFC3339 timestamp: ${JSON.stringify(s)}.`);
  return new Date(s);
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** cty's formatdate on the timestamp's UTC time (berth keeps no zone database in the parser). */
function formatDate(spec: string, t: Date): string {
  const two = (n: number): string => String(n).padStart(2, "0");
  const h12 = t.getUTCHours() % 12 || 12;
  const tokens: Record<string, () => string> = {
    YYYY: () => String(t.getUTCFullYear()).padStart(4, "0"),
    YY: () => two(t.getUTCFullYear() % 100),
    MMMM: () => MONTHS[t.getUTCMonth()]!,
    MMM: () => MONTHS[t.getUTCMonth()]!.slice(0, 3),
    MM: () => two(t.getUTCMonth() + 1),
    M: () => String(t.getUTCMonth() + 1),
    DD: () => two(t.getUTCDate()),
    D: () => String(t.getUTCDate()),
    EEEE: () => DAYS[t.getUTCDay()]!,
    EEE: () => DAYS[t.getUTCDay()]!.slice(0, 3),
    hh: () => two(t.getUTCHours()),
    h: () => String(t.getUTCHours()),
    HH: () => two(h12),
    H: () => String(h12),
    AA: () => (t.getUTCHours() < 12 ? "AM" : "PM"),
    aa: () => (t.getUTCHours() < 12 ? "am" : "pm"),
    mm: () => two(t.getUTCMinutes()),
    m: () => String(t.getUTCMinutes()),
    ss: () => two(t.getUTCSeconds()),
    s: () => String(t.getUTCSeconds()),
    ZZZZZ: () => "+00:00",
    ZZZZ: () => "+0000",
    ZZZ: () => "UTC",
    Z: () => "Z",
  };
  const re = /'((?:[^']|'')*)'|([A-Za-z])\2*/g;
  return spec.replace(re, (m, quoted: string | undefined) => {
    if (quoted !== undefined) return quoted.replace(/''/g, "'");
    const f = tokens[m];
    if (f === undefined)
      throw fail(`invalid date format verb ${JSON.stringify(m)}: unsupported sequence of letters.`);
    return f();
  });
}

export const formatFunctions: Record<string, HclFunction> = {
  format: (a) => (arity(a, 1, -1), format(toStr(a[0]!, "format"), a.slice(1))),
  formatlist: (a) => {
    arity(a, 1, -1);
    const fmt = toStr(a[0]!, "format");
    const lists = a.slice(1).map((x) => (Array.isArray(x) ? x : undefined));
    const lens = new Set(lists.filter((l) => l !== undefined).map((l) => l.length));
    if (lens.size > 1) throw fail("all list arguments must have the same length.");
    const n = lens.size === 0 ? 1 : [...lens][0]!;
    return Array.from({ length: n }, (_, i) =>
      format(
        fmt,
        a.slice(1).map((x, j) => (lists[j] ? lists[j][i]! : x)),
      ),
    );
  },
  timeadd: (a) => {
    arity(a, 2);
    const t = parseTime(toStr(a[0]!, "timestamp"));
    return new Date(t.getTime() + parseGoDuration(toStr(a[1]!, "duration")))
      .toISOString()
      .replace(/\.000Z$/, "Z");
  },
  formatdate: (a) => (arity(a, 2), formatDate(toStr(a[0]!, "format"), parseTime(toStr(a[1]!, "timestamp")))),
};
