/**
 * consul-template's list, parsing and math helpers, with its argument orders: the piped value comes
 * last (`{{ .Tags | contains "x" }}` is contains("x", tags); `{{ 7 | subtract 2 }}` is 7 - 2).
 * Integer arithmetic stays integral (`divide` truncates, as Go's int division does).
 */
import { equal, printValue, typeName, type Value } from "../../../../gotemplate/values.js";

type Def = (name: string, n: number | [number, number], fn: (a: Value[]) => Value) => void;

function list(v: Value): Value[] {
  if (Array.isArray(v)) return v;
  if (v === undefined || v === null) return [];
  throw new Error(`expected a list, got ${typeName(v)}`);
}

function has(l: Value, x: Value): boolean {
  return list(l).some((e) => {
    try {
      return equal(e, x);
    } catch {
      return false;
    }
  });
}

function num(v: Value): number {
  if (typeof v !== "number") throw new Error(`expected a number, got ${typeName(v)}`);
  return v;
}

function text(v: Value): string {
  if (typeof v !== "string") throw new Error(`expected a string, got ${typeName(v)}`);
  return v;
}

function goInt(s: string, unsigned: boolean): number {
  const t = s.trim() === s ? s : "";
  if (!(unsigned ? /^\+?\d+$/ : /^[+-]?\d+$/).test(t))
    throw new Error(
      `strconv.Parse${unsigned ? "Uint" : "Int"}: parsing ${JSON.stringify(s)}: invalid syntax`,
    );
  const n = Number(t);
  if (!Number.isSafeInteger(n))
    throw new Error(
      `strconv.Parse${unsigned ? "Uint" : "Int"}: parsing ${JSON.stringify(s)}: value out of range`,
    );
  return n;
}

export function addCollectionFuncs(def: Def): void {
  // `in` looks for a value in a list, or a substring in a string; `contains` is `in` reversed.
  const inside = (l: Value, x: Value): boolean => (typeof l === "string" ? l.includes(text(x)) : has(l, x));
  def("contains", 2, ([x, l]) => inside(l, x));
  def("in", 2, ([l, x]) => inside(l, x));
  def("containsAll", 2, ([want, l]) => list(want).every((x) => has(l, x)));
  def("containsAny", 2, ([want, l]) => list(want).some((x) => has(l, x)));
  def("containsNone", 2, ([want, l]) => !list(want).some((x) => has(l, x)));
  def("containsNotAll", 2, ([want, l]) => !list(want).every((x) => has(l, x)));
  def("join", 2, ([sep, l]) =>
    list(l)
      .map((e) => (typeof e === "string" ? e : printValue(e)))
      .join(text(sep)),
  );
  def("loop", [1, 2], (a) => {
    const [from, to] = a.length === 1 ? [0, num(a[0])] : [num(a[0]), num(a[1])];
    if (to - from > 1_000_000) throw new Error("loop: range too large");
    const out: number[] = [];
    for (let i = from; i < to; i++) out.push(i);
    return out;
  });
  def("splitToMap", 3, ([sep, kvSep, s]) => {
    const out: Record<string, Value> = {};
    if (text(s) === "") return out;
    for (const pair of text(s).split(text(sep))) {
      const at = pair.indexOf(text(kvSep));
      if (at < 0) throw new Error(`invalid key/value pair: ${JSON.stringify(pair)}`);
      out[pair.slice(0, at)] = pair.slice(at + text(kvSep).length);
    }
    return out;
  });

  def("parseBool", 1, ([s]) => {
    const v = text(s);
    if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
    if (["0", "f", "F", "FALSE", "false", "False", ""].includes(v)) return false;
    throw new Error(`strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
  });
  def("parseInt", 1, ([s]) => (text(s) === "" ? 0 : goInt(text(s), false)));
  def("parseUint", 1, ([s]) => (text(s) === "" ? 0 : goInt(text(s), true)));
  def("parseFloat", 1, ([s]) => {
    const v = text(s);
    if (v === "") return 0;
    const n = Number(v);
    if (v.trim() !== v || Number.isNaN(n))
      throw new Error(`strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
    return n;
  });

  const math = (name: string, op: (a: number, b: number) => number): void => {
    // consul-template's order: the second operand first, so that `{{ a | name b }}` is `a op b`.
    def(name, 2, ([b, a]) => op(num(a), num(b)));
  };
  math("add", (a, b) => a + b);
  math("subtract", (a, b) => a - b);
  math("multiply", (a, b) => a * b);
  math("divide", (a, b) => {
    if (b === 0) throw new Error("division by zero");
    return Number.isInteger(a) && Number.isInteger(b) ? Math.trunc(a / b) : a / b;
  });
  math("modulo", (a, b) => {
    if (b === 0) throw new Error("division by zero");
    return a % b;
  });
  def("minimum", 2, ([a, b]) => Math.min(num(a), num(b)));
  def("maximum", 2, ([a, b]) => Math.max(num(a), num(b)));
}
