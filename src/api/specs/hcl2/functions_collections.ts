/**
 * The collection functions of Nomad's jobspec2 (cty's stdlib): each checks its arguments' types and
 * throws an HclError whose detail says what was wrong (evaluate.ts prefixes the function's name).
 */
import { HclError, type Value } from "./ast.js";
import type { HclFunction } from "./evaluate.js";
import {
  distinct,
  equals,
  isObj,
  own,
  setKey,
  sortedKeys,
  toList,
  toNum,
  toObj,
  toStr,
  type Obj,
} from "./values.js";

export function fail(detail: string): HclError {
  return new HclError("Error in function call", detail);
}

/** Checks the argument count: exactly `min` (or between `min` and `max`; `max` -1 for no limit). */
export function arity(args: Value[], min: number, max = min): void {
  if (args.length < min || (max >= 0 && args.length > max)) {
    const want = max === min ? `${min}` : max < 0 ? `at least ${min}` : `${min} to ${max}`;
    throw fail(`${want} argument${min === 1 && max === 1 ? "" : "s"} required, ${args.length} given.`);
  }
}

function int(v: Value, what: string): number {
  const n = toNum(v, what);
  if (!Number.isInteger(n)) throw fail(`the ${what} must be a whole number.`);
  return n;
}

function lengthOf(v: Value): number {
  if (typeof v === "string") return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (isObj(v)) return Object.keys(v).length;
  throw fail("argument must be a string, a collection type, or a structural type.");
}

function flatten(xs: Value[]): Value[] {
  return xs.flatMap((x) => (Array.isArray(x) ? flatten(x) : [x]));
}

function sameElems(sets: Value[][], keep: (x: Value) => boolean): Value[] {
  return distinct(sets.flat().filter(keep));
}

export const collectionFunctions: Record<string, HclFunction> = {
  length: (a) => (arity(a, 1), lengthOf(a[0]!)),
  concat: (a) => (arity(a, 1, -1), a.flatMap((x, i) => toList(x, `argument ${i + 1}`))),
  contains: (a) => (arity(a, 2), toList(a[0]!, "list").some((x) => equals(x, a[1]!))),
  distinct: (a) => (arity(a, 1), distinct(toList(a[0]!, "list"))),
  compact: (a) => (
    arity(a, 1),
    toList(a[0]!, "list")
      .filter((x) => x !== null && x !== "")
      .map((x) => toStr(x, "element"))
  ),
  flatten: (a) => (arity(a, 1), flatten(toList(a[0]!, "list"))),
  reverse: (a) => (arity(a, 1), [...toList(a[0]!, "list")].reverse()),
  sort: (a) => {
    arity(a, 1);
    return toList(a[0]!, "list")
      .map((x) => toStr(x, "element"))
      .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  },
  element: (a) => {
    arity(a, 2);
    const l = toList(a[0]!, "list");
    if (l.length === 0) throw fail("cannot use element function with an empty list.");
    const i = int(a[1]!, "index");
    if (i < 0) throw fail("cannot use element function with a negative index.");
    return l[i % l.length]!;
  },
  index: (a) => {
    arity(a, 2);
    const i = toList(a[0]!, "list").findIndex((x) => equals(x, a[1]!));
    if (i < 0) throw fail("item not found.");
    return i;
  },
  slice: (a) => {
    arity(a, 3);
    const l = toList(a[0]!, "list");
    const from = int(a[1]!, "start index");
    const to = int(a[2]!, "end index");
    if (from < 0 || to > l.length || from > to)
      throw fail("the start and end indices must be within the list and in order.");
    return l.slice(from, to);
  },
  chunklist: (a) => {
    arity(a, 2);
    const l = toList(a[0]!, "list");
    const n = int(a[1]!, "size");
    if (n < 0) throw fail("the size argument must be positive.");
    if (n === 0) return [l];
    const out: Value[] = [];
    for (let i = 0; i < l.length; i += n) out.push(l.slice(i, i + n));
    return out;
  },
  coalesce: (a) => {
    arity(a, 1, -1);
    const v = a.find((x) => x !== null && x !== "");
    if (v === undefined) throw fail("no non-null, non-empty-string arguments.");
    return v;
  },
  coalescelist: (a) => {
    arity(a, 1, -1);
    return a.map((x, i) => toList(x, `argument ${i + 1}`)).find((l) => l.length > 0) ?? [];
  },
  keys: (a) => (arity(a, 1), sortedKeys(toObj(a[0]!, "argument"))),
  values: (a) => {
    arity(a, 1);
    const o = toObj(a[0]!, "argument");
    return sortedKeys(o).map((k) => o[k]!);
  },
  lookup: (a) => {
    arity(a, 2, 3);
    const v = own(toObj(a[0]!, "map"), toStr(a[1]!, "key"));
    if (v !== undefined) return v;
    if (a.length === 3) return a[2]!;
    throw fail(`the given object has no attribute ${JSON.stringify(toStr(a[1]!))}.`);
  },
  merge: (a) => {
    const out: Obj = {};
    for (const [i, x] of a.entries()) {
      if (x === null) continue;
      const o = toObj(x, `argument ${i + 1}`);
      for (const k of Object.keys(o)) setKey(out, k, o[k]!);
    }
    return out;
  },
  zipmap: (a) => {
    arity(a, 2);
    const ks = toList(a[0]!, "keys");
    const vs = toList(a[1]!, "values");
    if (ks.length !== vs.length)
      throw fail(`number of keys (${ks.length}) does not match number of values (${vs.length}).`);
    const out: Obj = {};
    ks.forEach((k, i) => setKey(out, toStr(k, "key"), vs[i]!));
    return out;
  },
  range: (a) => {
    arity(a, 1, 3);
    const n = a.map((x) => toNum(x, "argument"));
    const [start, limit, step] =
      n.length === 1 ? [0, n[0]!, 1] : [n[0]!, n[1]!, n[2] ?? (n[0]! > n[1]! ? -1 : 1)];
    if (step === 0) throw fail("step must not be zero.");
    if ((step > 0 && start > limit) || (step < 0 && start < limit))
      throw fail("the step must move from start towards limit.");
    const out: Value[] = [];
    for (let x = start; step > 0 ? x < limit : x > limit; x += step) {
      if (out.length >= 1024)
        throw fail(
          "more than 1024 values were generated; either decrease the difference between start and limit or use a smaller step.",
        );
      out.push(x);
    }
    return out;
  },
  setunion: (a) => (arity(a, 1, -1), distinct(a.flatMap((x, i) => toList(x, `argument ${i + 1}`)))),
  setintersection: (a) => {
    arity(a, 1, -1);
    const sets = a.map((x, i) => toList(x, `argument ${i + 1}`));
    return sameElems(sets, (x) => sets.every((s) => s.some((y) => equals(x, y))));
  },
  setproduct: (a) => {
    arity(a, 1, -1);
    let out: Value[][] = [[]];
    for (const [i, x] of a.entries()) {
      const l = toList(x, `argument ${i + 1}`);
      out = out.flatMap((p) => l.map((e) => [...p, e]));
    }
    return out;
  },
};
