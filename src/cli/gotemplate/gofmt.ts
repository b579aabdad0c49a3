/**
 * Go's fmt for the values a template sees: how `{{.X}}` prints a value (%v), Sprint and Sprintln
 * (`print`, `println`), and Sprintf (`printf`) with the verbs operators write — %v %+v %s %d %q %t
 * %f %e %g %x %X %o %b %c %U %T %% — flags `-+# 0`, width and precision, and Go's in-band complaints
 * (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`).
 */
import { kindOf, sortedEntries, typeName } from "./values.js";

/** Go's strconv.FormatFloat(x, 'g', prec, 64), prec -1 meaning the shortest exact form. */
export function formatG(x: number, prec = -1, upper = false): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf";
  const p = prec === 0 ? 1 : prec;
  const [mant, expText] = (p < 0 ? x.toExponential() : x.toExponential(p - 1)).split("e") as [string, string];
  const exp = Number(expText);
  const neg = mant.startsWith("-");
  let digits = mant.replace("-", "").replace(".", "");
  if (p >= 0) digits = digits.replace(/0+$/, "") || "0";
  let eprec = p < 0 ? 6 : p;
  if (p >= 0 && eprec > digits.length && digits.length >= exp + 1) eprec = digits.length;
  let out: string;
  if (exp < -4 || exp >= eprec) {
    const e = `${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    out = `${digits[0]}${digits.length > 1 ? "." + digits.slice(1) : ""}${upper ? "E" : "e"}${e}`;
  } else if (exp >= 0) {
    const int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    out = frac ? `${int}.${frac}` : int;
  } else {
    out = `0.${"0".repeat(-exp - 1)}${digits}`;
  }
  return neg ? "-" + out : out;
}

function formatE(x: number, prec: number, upper: boolean): string {
  const [m, e] = x.toExponential(prec).split("e") as [string, string];
  const n = Number(e);
  return `${m}${upper ? "E" : "e"}${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
}

/** Go's strconv.Quote: printable characters as they are, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const c of s) {
    const code = c.codePointAt(0)!;
    if (c === '"' || c === "\\") out += "\\" + c;
    else if (code >= 0x20 && code < 0x7f) out += c;
    else {
      const named: Record<string, string> = {
        "\x07": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
      };
      if (named[c]) out += named[c];
      else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
      else if (/^[\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}]$/u.test(c) && code !== 0xad) out += c;
      else if (code > 0xffff) out += `\\U${code.toString(16).padStart(8, "0")}`;
      else out += `\\u${code.toString(16).padStart(4, "0")}`;
    }
  }
  return out + '"';
}

/** %v of a value; `plus`: %+v (struct fields named). */
export function formatValue(v: unknown, plus = false): string {
  switch (kindOf(v)) {
    case "invalid":
      return "<no value>";
    case "nil":
      return "<nil>";
    case "string":
      return v as string;
    case "int":
      return BigInt(v as number | bigint).toString();
    case "float":
      return formatG(v as number);
    case "bool":
      return String(v);
    case "slice":
      return `[${(v as unknown[]).map((e) => formatValue(e, plus)).join(" ")}]`;
    case "map":
      return `map[${sortedEntries(v as object)
        .map(([k, e]) => `${k}:${formatValue(e, plus)}`)
        .join(" ")}]`;
    case "struct":
      return `{${Object.entries(v as object)
        .map(([k, e]) => (plus ? `${k}:${formatValue(e, plus)}` : formatValue(e, plus)))
        .join(" ")}}`;
  }
}

/** Go's Sprint: operands side by side, a space between two when neither is a string. */
export function sprint(args: unknown[]): string {
  let out = "";
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== "string" && typeof args[i - 1] !== "string") out += " ";
    out += formatValue(a === undefined ? null : a);
  });
  return out;
}

/** Go's Sprintln: operands always space-separated, then a newline. */
export function sprintln(args: unknown[]): string {
  return args.map((a) => formatValue(a === undefined ? null : a)).join(" ") + "\n";
}

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  zero: boolean;
  space: boolean;
  width: number | undefined;
  prec: number | undefined;
}

function pad(s: string, f: Spec, numeric: boolean): string {
  const len = [...s].length;
  if (f.width === undefined || len >= f.width) return s;
  const fill = f.width - len;
  if (f.minus) return s + " ".repeat(fill);
  if (f.zero && numeric && f.prec === undefined) {
    const sign = /^[+-]/.test(s) ? s[0]! : "";
    return sign + "0".repeat(fill) + s.slice(sign.length);
  }
  return " ".repeat(fill) + s;
}

function bad(verb: string, v: unknown): string {
  return v === null || v === undefined ? `%!${verb}(<nil>)` : `%!${verb}(${typeName(v)}=${formatValue(v)})`;
}

function signed(s: string, f: Spec, neg: boolean): string {
  return neg ? "-" + s : f.plus ? "+" + s : f.space ? " " + s : s;
}

function formatInt(n: number, verb: string, f: Spec): string | undefined {
  const neg = n < 0;
  const a = Math.abs(n);
  const radix: Record<string, number> = { d: 10, v: 10, b: 2, o: 8, O: 8, x: 16, X: 16 };
  if (verb === "c") return String.fromCodePoint(a);
  if (verb === "q") return `'${String.fromCodePoint(a)}'`;
  if (verb === "U") return `U+${a.toString(16).toUpperCase().padStart(4, "0")}`;
  if (verb in radix) {
    let s = BigInt(a).toString(radix[verb]);
    if (f.prec !== undefined) s = s.padStart(f.prec, "0");
    if (verb === "X") s = s.toUpperCase();
    const prefix: Record<string, string> = { x: "0x", X: "0X", o: "0", O: "0o", b: "0b" };
    if (f.sharp || verb === "O") s = (prefix[verb] ?? "") + s;
    return signed(s, f, neg);
  }
  return "efgEFG".includes(verb) ? formatFloat(n, verb, f) : undefined;
}

function formatFloat(x: number, verb: string, f: Spec): string | undefined {
  const neg = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  let s: string;
  switch (verb) {
    case "v":
    case "g":
    case "G":
      s = formatG(a, f.prec ?? -1, verb === "G");
      break;
    case "f":
    case "F":
      s = a.toFixed(f.prec ?? 6);
      break;
    case "e":
    case "E":
      s = formatE(a, f.prec ?? 6, verb === "E");
      break;
    default:
      return undefined;
  }
  return signed(s, f, neg);
}

function formatString(s: string, verb: string, f: Spec): string | undefined {
  switch (verb) {
    case "s":
    case "v":
      return f.prec === undefined ? s : [...s].slice(0, f.prec).join("");
    case "q":
      return f.sharp && !/[`\p{Cc}]/u.test(s) ? "`" + s + "`" : goQuote(s);
    case "x":
    case "X": {
      const hex = [...Buffer.from(s, "utf8")]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join(f.space ? " " : "");
      return verb === "X" ? hex.toUpperCase() : hex;
    }
    default:
      return undefined;
  }
}

/** One operand under one verb; undefined: the verb does not apply (Go's `%!verb(type=value)`). */
function formatOne(v: unknown, verb: string, f: Spec): string | undefined {
  switch (kindOf(v)) {
    case "invalid":
    case "nil":
      return verb === "v" ? "<nil>" : undefined;
    case "bool":
      return verb === "t" || verb === "v" ? String(v) : undefined;
    case "int":
      return formatInt(Number(v), verb, f);
    case "float":
      return formatFloat(v as number, verb, f);
    case "string":
      return formatString(v as string, verb, f);
    case "slice": {
      const parts = (v as unknown[]).map((e) => formatOne(e, verb, f) ?? bad(verb, e));
      return `[${parts.join(" ")}]`;
    }
    default:
      if (verb === "v") return formatValue(v, f.plus);
      if (verb === "s" || verb === "d" || verb === "q" || verb === "x") {
        const entries = kindOf(v) === "map" ? sortedEntries(v as object) : Object.entries(v as object);
        const body = entries.map(([k, e]) => {
          const s = formatOne(e, verb, f) ?? bad(verb, e);
          return kindOf(v) === "map" ? `${k}:${s}` : s;
        });
        return kindOf(v) === "map" ? `map[${body.join(" ")}]` : `{${body.join(" ")}}`;
      }
      return undefined;
  }
}

/** Go's Sprintf. */
export function sprintf(format: string, args: unknown[]): string {
  let out = "";
  let argi = 0;
  const re = /%([-+# 0]*)(\*|\d+)?(?:\.(\*|\d*))?(.)?/gs;
  let last = 0;
  for (let m = re.exec(format); m; m = re.exec(format)) {
    out += format.slice(last, m.index);
    last = re.lastIndex;
    const flags = m[1]!;
    const f: Spec = {
      minus: flags.includes("-"),
      plus: flags.includes("+"),
      sharp: flags.includes("#"),
      zero: flags.includes("0"),
      space: flags.includes(" "),
      width: undefined,
      prec: undefined,
    };
    const star = (): number | undefined => {
      const a = args[argi++];
      return typeof a === "number" && Number.isInteger(a) ? a : undefined;
    };
    if (m[2] !== undefined) f.width = m[2] === "*" ? star() : Number(m[2]);
    if (m[3] !== undefined) f.prec = m[3] === "*" ? star() : Number(m[3] || "0");
    const verb = m[4];
    if (verb === undefined) {
      out += "%!(NOVERB)";
      continue;
    }
    if (verb === "%") {
      out += "%";
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const arg = args[argi++];
    const v = arg === undefined ? null : arg;
    if (verb === "T") {
      out += pad(v === null ? "<nil>" : typeName(v), f, false);
      continue;
    }
    const s = formatOne(v, verb, f);
    const numeric = kindOf(v) === "int" || kindOf(v) === "float";
    out += s === undefined ? bad(verb, v) : pad(s, f, numeric);
  }
  out += format.slice(last);
  if (argi < args.length) {
    const extra = args
      .slice(argi)
      .map((a) => (a === undefined || a === null ? "<nil>" : `${typeName(a)}=${formatValue(a)}`));
    out += `%!(EXTRA ${extra.join(", ")})`;
  }
  return out;
}
