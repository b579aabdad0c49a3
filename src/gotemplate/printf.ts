/**
 * Go's fmt.Sprintf, Sprint and Sprintln for the template's `printf`, `print` and `println`: the
 * verbs templates use (%v %s %q %d %f %e %g %x %X %o %b %t %c %T %%) with flags (`-`, `+`, `0`,
 * space, `#`), width and precision, `*` widths included; Go's error notes for a wrong type
 * (`%!d(string=x)`), a missing operand (`%!d(MISSING)`) and extra ones (`%!(EXTRA string=x)`).
 */
import { formatNumber, goExponent, printValue, typeName, type Value } from "./values.js";

export function sprint(args: Value[]): string {
  let out = "";
  args.forEach((a, i) => {
    // Go adds a space between operands when neither is a string.
    if (i > 0 && typeof a !== "string" && typeof args[i - 1] !== "string") out += " ";
    out += printValue(a);
  });
  return out;
}

export function sprintln(args: Value[]): string {
  return `${args.map(printValue).join(" ")}\n`;
}

interface Spec {
  minus: boolean;
  plus: boolean;
  zero: boolean;
  space: boolean;
  sharp: boolean;
  width: number | null;
  prec: number | null;
}

export function sprintf(format: string, args: Value[]): string {
  let out = "";
  let argi = 0;
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c !== "%") {
      out += c;
      i++;
      continue;
    }
    i++;
    const spec: Spec = {
      minus: false,
      plus: false,
      zero: false,
      space: false,
      sharp: false,
      width: null,
      prec: null,
    };
    for (; i < format.length; i++) {
      const f = format[i];
      if (f === "-") spec.minus = true;
      else if (f === "+") spec.plus = true;
      else if (f === "0") spec.zero = true;
      else if (f === " ") spec.space = true;
      else if (f === "#") spec.sharp = true;
      else break;
    }
    const num = (): number | null => {
      if (format[i] === "*") {
        i++;
        const a = args[argi++];
        return typeof a === "number" ? Math.trunc(a) : null;
      }
      const m = /^\d+/.exec(format.slice(i));
      if (!m) return null;
      i += m[0].length;
      return Number(m[0]);
    };
    spec.width = num();
    if (format[i] === ".") {
      i++;
      spec.prec = num() ?? 0;
    }
    const verb = format[i++];
    if (verb === undefined) {
      out += "%!(NOVERB)";
      break;
    }
    if (verb === "%") {
      out += "%";
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += pad(formatOne(verb, args[argi++], spec), spec);
  }
  if (argi < args.length) {
    const extra = args.slice(argi).map((a) => `${typeName(a)}=${printValue(a)}`);
    out += `%!(EXTRA ${extra.join(", ")})`;
  }
  return out;
}

function pad(s: string, spec: Spec): string {
  if (spec.width === null || s.length >= spec.width) return s;
  if (spec.minus) return s.padEnd(spec.width);
  if (spec.zero && /^[+-]?[0-9.]/.test(s)) {
    const sign = /^[+-]/.test(s) ? s[0]! : "";
    return sign + s.slice(sign.length).padStart(spec.width - sign.length, "0");
  }
  return s.padStart(spec.width);
}

function bad(verb: string, v: Value): string {
  return `%!${verb}(${typeName(v)}=${printValue(v)})`;
}

function signed(s: string, n: number, spec: Spec): string {
  if (n < 0 || Object.is(n, -0)) return s;
  return (spec.plus ? "+" : spec.space ? " " : "") + s;
}

function formatOne(verb: string, v: Value, spec: Spec): string {
  switch (verb) {
    case "v":
      return typeof v === "number" ? signed(formatNumber(v), v, spec) : printValue(v);
    case "s":
      return typeof v === "object" && v !== null ? printValue(v) : precision(printValue(v), spec);
    case "q":
      return typeof v === "string" ? JSON.stringify(v) : bad(verb, v);
    case "t":
      return typeof v === "boolean" ? String(v) : bad(verb, v);
    case "T":
      return typeName(v);
    case "d":
      return typeof v === "number" && Number.isInteger(v) ? signed(String(v), v, spec) : bad(verb, v);
    case "c":
      return typeof v === "number" && Number.isInteger(v) ? String.fromCodePoint(v) : bad(verb, v);
    case "b":
    case "o":
    case "x":
    case "X":
      return radix(verb, v, spec);
    case "f":
    case "F":
      return typeof v === "number" ? signed(v.toFixed(spec.prec ?? 6), v, spec) : bad(verb, v);
    case "e":
    case "E": {
      if (typeof v !== "number") return bad(verb, v);
      const s = goExponent(v.toExponential(spec.prec ?? 6));
      return signed(verb === "E" ? s.toUpperCase() : s, v, spec);
    }
    case "g":
    case "G": {
      if (typeof v !== "number") return bad(verb, v);
      const s = spec.prec === null ? formatNumber(v) : goExponent(String(Number(v.toPrecision(spec.prec))));
      return signed(verb === "G" ? s.toUpperCase() : s, v, spec);
    }
    default:
      return `%!${verb}(${typeName(v)}=${printValue(v)})`;
  }
}

function precision(s: string, spec: Spec): string {
  return spec.prec === null ? s : [...s].slice(0, spec.prec).join("");
}

function radix(verb: string, v: Value, spec: Spec): string {
  const base = { b: 2, o: 8, x: 16, X: 16 }[verb]!;
  let s: string;
  if (typeof v === "number" && Number.isInteger(v)) {
    s = Math.abs(v).toString(base);
    if (spec.sharp) s = ({ b: "0b", o: "0", x: "0x", X: "0X" }[verb] ?? "") + s;
    s = (v < 0 ? "-" : "") + s;
    s = signed(s, v, spec);
  } else if (typeof v === "string" && base === 16) {
    s = Buffer.from(v).toString("hex");
  } else {
    return bad(verb, v);
  }
  return verb === "X" ? s.toUpperCase() : s;
}
