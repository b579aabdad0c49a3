/**
 * The functions a `-t` template may call: Go's text/template builtins, and the part of the sprig
 * library Nomad registers that operators use, under Nomad's names (`sprig_join`, `sprig_upper`, …:
 * Nomad's makeFuncMap prefixes every sprig function with `sprig_`). `and` and `or` are not here:
 * they evaluate their arguments lazily, so exec.ts runs them.
 */
import { formatValue, goQuote, sprint, sprintf, sprintln } from "./gofmt.js";
import { isTrue, kindOf, sortedEntries, typeName } from "./values.js";

/** A wrong argument type: Go reports it bare, not as `error calling f: …`. */
export class ArgTypeError extends Error {
  override readonly name = "ArgTypeError";
}

export interface Func {
  /** Fixed parameters; `variadic`: more may follow. */
  params: number;
  variadic?: boolean;
  fn(args: unknown[]): unknown;
}

function str(v: unknown): string {
  if (typeof v !== "string")
    throw new ArgTypeError(`wrong type for value; expected string; got ${typeName(v)}`);
  return v;
}
function int(v: unknown): number {
  if (kindOf(v) !== "int") throw new ArgTypeError(`wrong type for value; expected int; got ${typeName(v)}`);
  return Number(v);
}
/** sprig's strval: a string as it is, anything else as %v prints it. */
const strval = (v: unknown): string => (typeof v === "string" ? v : formatValue(v ?? null));
/** sprig's toInt64 (via cast): numbers and numeric strings, anything else 0. */
const toInt = (v: unknown): number => {
  const n =
    typeof v === "string" ? Number(v) : typeof v === "number" ? v : typeof v === "boolean" ? Number(v) : 0;
  return Number.isFinite(n) ? Math.trunc(n) : 0;
};
/** The one string html/js/urlquery escape: a lone string argument, or the arguments' Sprint. */
const evalArgs = (args: unknown[]): string =>
  args.length === 1 && typeof args[0] === "string" ? args[0] : sprint(args);

const f = (params: number, fn: (args: unknown[]) => unknown, variadic = false): Func => ({
  params,
  fn,
  variadic,
});

function compareBasic(a: unknown, b: unknown): number {
  const ka = kindOf(a);
  const kb = kindOf(b);
  const num = (k: string) => k === "int" || k === "float";
  if (num(ka) && num(kb)) return Number(a) - Number(b);
  if (ka === "string" && kb === "string") return (a as string) < (b as string) ? -1 : a === b ? 0 : 1;
  if (!["int", "float", "string", "bool"].includes(ka) || !["int", "float", "string", "bool"].includes(kb)) {
    throw new Error("invalid type for comparison");
  }
  throw new Error("incompatible types for comparison");
}

function eq(args: unknown[]): boolean {
  const [first, ...rest] = args;
  if (rest.length === 0) throw new Error("missing argument for comparison");
  return rest.some((b) => {
    const ka = kindOf(first);
    const kb = kindOf(b);
    if (ka === "nil" || ka === "invalid" || kb === "nil" || kb === "invalid")
      return (ka === "nil" || ka === "invalid") && (kb === "nil" || kb === "invalid");
    if (ka === "bool" || kb === "bool") {
      if (ka !== kb) throw new Error("incompatible types for comparison");
      return first === b;
    }
    if (["slice", "map", "struct"].includes(ka) || ["slice", "map", "struct"].includes(kb)) {
      throw new Error(`non-comparable type ${typeName(["slice", "map", "struct"].includes(ka) ? first : b)}`);
    }
    return compareBasic(first, b) === 0;
  });
}

function index(args: unknown[]): unknown {
  let item = args[0];
  for (const ix of args.slice(1)) {
    const k = kindOf(item);
    if (k === "nil" || k === "invalid") throw new Error("index of untyped nil");
    if (k === "slice" || k === "string") {
      const list = item as unknown[] | string;
      const i = kindOf(ix) === "int" ? Number(ix) : NaN;
      if (Number.isNaN(i)) throw new Error(`cannot index slice/array with type ${typeName(ix)}`);
      if (i < 0 || i >= list.length) throw new Error(`index out of range: ${i}`);
      item = typeof list === "string" ? Buffer.from(list, "utf8")[i] : list[i];
    } else if (k === "map") {
      if (typeof ix !== "string") throw new Error(`value has type ${typeName(ix)}; should be string`);
      const m = item as Record<string, unknown>;
      // A missing key is the element type's zero value: "" in a map of strings, nil otherwise.
      item = Object.hasOwn(m, ix) ? m[ix] : Object.values(m).every((x) => typeof x === "string") ? "" : null;
    } else {
      throw new Error(`can't index item of type ${typeName(item)}`);
    }
  }
  return item;
}

function slice(args: unknown[]): unknown {
  const [item, ...ix] = args;
  const k = kindOf(item);
  if (k !== "slice" && k !== "string") throw new Error(`can't slice item of type ${typeName(item)}`);
  if (ix.length > 3) throw new Error(`too many slice indexes: ${ix.length}`);
  if (k === "string" && ix.length === 3) throw new Error("cannot 3-index slice a string");
  const len = k === "string" ? Buffer.byteLength(item as string) : (item as unknown[]).length;
  const n = ix.map((x) => (kindOf(x) === "int" ? Number(x) : NaN));
  if (n.some((x) => Number.isNaN(x))) throw new Error("cannot index slice/array with nil");
  const [lo = 0, hi = len] = n;
  for (const x of n) if (x < 0 || x > len) throw new Error(`index out of range: ${x}`);
  if (hi < lo) throw new Error(`invalid slice index: ${lo} > ${hi}`);
  return k === "string"
    ? Buffer.from(item as string, "utf8")
        .subarray(lo, hi)
        .toString("utf8")
    : (item as unknown[]).slice(lo, hi);
}

function htmlEscape(s: string): string {
  return s.replace(
    /[<>&'"\0]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&#39;", '"': "&#34;", "\0": "\uFFFD" })[c]!,
  );
}

function jsEscape(s: string): string {
  let out = "";
  for (const c of s) {
    const code = c.codePointAt(0)!;
    if (c === "\\" || c === "'" || c === '"') out += "\\" + c;
    else if ("<>&=".includes(c) || code < 0x20)
      out += `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
    else out += c;
  }
  return out;
}

function urlQueryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+");
}

/** Go's encoding/json of a value: map keys sorted, `<`, `>`, `&` escaped as json.Marshal does. */
export function goJson(v: unknown, indent: string): string {
  const ordered = (x: unknown): unknown => {
    const k = kindOf(x);
    if (k === "slice") return (x as unknown[]).map(ordered);
    if (k === "map")
      return Object.fromEntries(sortedEntries(x as object).map(([key, e]) => [key, ordered(e)]));
    if (k === "struct")
      return Object.fromEntries(Object.entries(x as object).map(([key, e]) => [key, ordered(e)]));
    return x === undefined ? null : x;
  };
  return (JSON.stringify(ordered(v), null, indent) ?? "null").replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const BUILTINS: Record<string, Func> = {
  not: f(1, ([a]) => !isTrue(a)),
  len: f(1, ([a]) => {
    const k = kindOf(a);
    if (k === "string") return Buffer.byteLength(a as string);
    if (k === "slice") return (a as unknown[]).length;
    if (k === "map") return Object.keys(a as object).length;
    throw new Error(k === "nil" || k === "invalid" ? "len of nil pointer" : `len of type ${typeName(a)}`);
  }),
  index: f(1, index, true),
  slice: f(1, slice, true),
  print: f(0, sprint, true),
  println: f(0, sprintln, true),
  printf: f(1, ([format, ...rest]) => sprintf(str(format), rest), true),
  html: f(0, (args) => htmlEscape(evalArgs(args)), true),
  js: f(0, (args) => jsEscape(evalArgs(args)), true),
  urlquery: f(0, (args) => urlQueryEscape(evalArgs(args)), true),
  eq: f(1, eq, true),
  ne: f(2, ([a, b]) => !eq([a, b])),
  lt: f(2, ([a, b]) => compareBasic(a, b) < 0),
  le: f(2, ([a, b]) => compareBasic(a, b) <= 0),
  gt: f(2, ([a, b]) => compareBasic(a, b) > 0),
  ge: f(2, ([a, b]) => compareBasic(a, b) >= 0),
};

const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === null || v === undefined ? [] : [v]);

/** The sprig functions berth gives, without their `sprig_` prefix. */
const SPRIG: Record<string, Func> = {
  join: f(2, ([sep, list]) => listOf(list).map(strval).join(str(sep))),
  upper: f(1, ([s]) => str(s).toUpperCase()),
  lower: f(1, ([s]) => str(s).toLowerCase()),
  title: f(1, ([s]) =>
    str(s).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, a: string, b: string) => a + b.toUpperCase()),
  ),
  trim: f(1, ([s]) => str(s).trim()),
  trimPrefix: f(2, ([p, s]) => (str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : str(s))),
  trimSuffix: f(2, ([x, s]) =>
    str(x) !== "" && str(s).endsWith(str(x)) ? str(s).slice(0, -str(x).length) : str(s),
  ),
  contains: f(2, ([sub, s]) => str(s).includes(str(sub))),
  hasPrefix: f(2, ([p, s]) => str(s).startsWith(str(p))),
  hasSuffix: f(2, ([x, s]) => str(s).endsWith(str(x))),
  replace: f(3, ([from, to, s]) => str(s).split(str(from)).join(str(to))),
  split: f(2, ([sep, s]) =>
    Object.fromEntries(
      str(s)
        .split(str(sep))
        .map((p, i) => [`_${i}`, p]),
    ),
  ),
  splitList: f(2, ([sep, s]) => str(s).split(str(sep))),
  repeat: f(2, ([n, s]) => str(s).repeat(Math.max(0, int(n)))),
  trunc: f(2, ([n, s]) => {
    const c = int(n);
    return c >= 0 ? str(s).slice(0, c) : str(s).slice(Math.max(0, str(s).length + c));
  }),
  indent: f(2, ([n, s]) =>
    str(s)
      .split("\n")
      .map((l) => " ".repeat(Math.max(0, int(n))) + l)
      .join("\n"),
  ),
  nindent: f(
    2,
    ([n, s]) =>
      "\n" +
      str(s)
        .split("\n")
        .map((l) => " ".repeat(Math.max(0, int(n))) + l)
        .join("\n"),
  ),
  quote: f(
    0,
    (args) =>
      args
        .filter((a) => a !== null && a !== undefined)
        .map((a) => goQuote(strval(a)))
        .join(" "),
    true,
  ),
  squote: f(
    0,
    (args) =>
      args
        .filter((a) => a !== null && a !== undefined)
        .map((a) => `'${strval(a)}'`)
        .join(" "),
    true,
  ),
  toString: f(1, ([v]) => strval(v)),
  toJson: f(1, ([v]) => goJson(v, "")),
  toPrettyJson: f(1, ([v]) => goJson(v, "  ")),
  default: f(1, ([d, ...given]) => (given.length === 0 || !isTrue(given[0]) ? d : given[0]), true),
  empty: f(1, ([v]) => !isTrue(v)),
  ternary: f(3, ([yes, no, cond]) => (isTrue(cond) ? yes : no)),
  list: f(0, (args) => args, true),
  first: f(1, ([l]) => (listOf(l).length > 0 ? listOf(l)[0] : null)),
  last: f(1, ([l]) => (listOf(l).length > 0 ? listOf(l).at(-1) : null)),
  has: f(2, ([needle, l]) => listOf(l).some((x) => x === needle)),
  keys: f(
    1,
    (maps) => maps.flatMap((m) => (kindOf(m) === "map" ? sortedEntries(m as object).map(([k]) => k) : [])),
    true,
  ),
  sortAlpha: f(1, ([l]) => listOf(l).map(strval).sort()),
  add: f(0, (args) => args.reduce<number>((a, b) => a + toInt(b), 0), true),
  sub: f(2, ([a, b]) => toInt(a) - toInt(b)),
  mul: f(1, (args) => args.reduce<number>((a, b) => a * toInt(b), 1), true),
  div: f(2, ([a, b]) => {
    if (toInt(b) === 0) throw new Error("runtime error: integer divide by zero");
    return Math.trunc(toInt(a) / toInt(b));
  }),
};

/** Every function a template may call, by the name it is called by. */
export const FUNCS: ReadonlyMap<string, Func> = new Map([
  ...Object.entries(BUILTINS),
  ...Object.entries(SPRIG).map(([name, fn]) => [`sprig_${name}`, fn] as const),
]);

/** Names the parser accepts: FUNCS and the lazy `and`, `or`. */
export const FUNC_NAMES: ReadonlySet<string> = new Set([...FUNCS.keys(), "and", "or"]);
