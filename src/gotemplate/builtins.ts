/**
 * Go's text/template builtins (`and`, `or`, `not`, `len`, `index`, `slice`, `print`, `printf`,
 * `println`, `html`, `js`, `urlquery`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`) for any function table
 * built on this engine, and the argument checks function tables share. `and`/`or` are evaluated
 * lazily by exec.ts; their entries only make the names known to the parser.
 */
import type { TemplateFunc } from "./exec.js";
import { sprint, sprintf, sprintln } from "./printf.js";
import { equal, isMap, length, less, typeName, type Value } from "./values.js";

/** Adds a function checking its argument count (`n` exact, or [min, max]). */
export type DefineFunc = (name: string, n: number | [number, number], fn: (a: Value[]) => Value) => void;

/** A function table and its `def`, with the builtins already in it. */
export function goFuncTable(): { funcs: Map<string, TemplateFunc>; def: DefineFunc } {
  const funcs = new Map<string, TemplateFunc>();
  const def: DefineFunc = (name, n, fn) => {
    const [min, max] = typeof n === "number" ? [n, n] : n;
    funcs.set(name, (a) => {
      arity(name, a, min, max);
      return fn(a);
    });
  };
  addGoBuiltins(funcs, def);
  return { funcs, def };
}

export function str(v: Value, what = "argument"): string {
  if (typeof v !== "string") throw new Error(`${what} must be a string, got ${typeName(v)}`);
  return v;
}

export function num(v: Value): number {
  if (typeof v !== "number") throw new Error(`expected a number, got ${typeName(v)}`);
  return v;
}

export function arity(name: string, args: Value[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw new Error(`wrong number of args for ${name}: want ${want} got ${args.length}`);
  }
}

export function addGoBuiltins(f: Map<string, TemplateFunc>, def: DefineFunc): void {
  // Go's builtins (and/or are evaluated lazily by exec.ts).
  f.set("and", () => null);
  f.set("or", () => null);
  def("not", 1, ([a]) => !truthy(a));
  def("len", 1, ([a]) => length(a));
  def("print", [0, Infinity], (a) => sprint(a));
  def("println", [0, Infinity], (a) => sprintln(a));
  def("printf", [1, Infinity], ([fmt, ...rest]) => sprintf(str(fmt, "format"), rest));
  def("eq", [2, Infinity], ([a, ...bs]) => bs.some((b) => equal(a, b)));
  def("ne", 2, ([a, b]) => !equal(a, b));
  def("lt", 2, ([a, b]) => less(a, b));
  def("le", 2, ([a, b]) => less(a, b) || equal(a, b));
  def("gt", 2, ([a, b]) => !less(a, b) && !equal(a, b));
  def("ge", 2, ([a, b]) => !less(a, b));
  def("index", [1, Infinity], ([x, ...keys]) => keys.reduce<Value>((cur, k) => indexOne(cur, k), x));
  def("slice", [1, 4], ([x, ...idx]) => sliceOf(x, idx));
  def("html", [0, Infinity], (a) => sprint(a).replace(/[&<>"'\0]/g, (c) => HTML_ESCAPES[c] ?? c));
  def("js", [0, Infinity], (a) =>
    sprint(a).replace(
      /[\\'"<>&=\n\r\t]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`,
    ),
  );
  def("urlquery", [0, Infinity], (a) => encodeURIComponent(sprint(a)).replace(/%20/g, "+"));
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&#34;",
  "'": "&#39;",
  "\0": "\uFFFD",
};

function truthy(v: Value): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v !== "";
  return length(v) > 0;
}

function indexOne(cur: Value, k: Value): Value {
  if (Array.isArray(cur) || typeof cur === "string") {
    if (typeof k !== "number" || !Number.isInteger(k))
      throw new Error(`cannot index slice/array with type ${typeName(k)}`);
    const n = typeof cur === "string" ? Buffer.byteLength(cur) : cur.length;
    if (k < 0 || k >= n) throw new Error(`index out of range: ${k}`);
    return typeof cur === "string" ? Buffer.from(cur)[k]! : cur[k];
  }
  if (isMap(cur)) return Object.hasOwn(cur, str(k, "map key")) ? cur[k as string] : null;
  if (cur === undefined || cur === null) throw new Error("index of untyped nil");
  throw new Error(`can't index item of type ${typeName(cur)}`);
}

function sliceOf(x: Value, idx: Value[]): Value {
  const n = typeof x === "string" ? x.length : Array.isArray(x) ? x.length : -1;
  if (n < 0) throw new Error(`can't slice item of type ${typeName(x)}`);
  const [lo = 0, hi = n] = idx.map((i) => num(i));
  if (lo < 0 || hi > n || lo > hi) throw new Error(`index out of range: ${lo}:${hi}`);
  return typeof x === "string" ? x.slice(lo, hi) : (x as Value[]).slice(lo, hi);
}
