/**
 * Values of the language and cty's automatic conversions between its primitive types: a number or
 * a bool converts to a string, a string that spells a number or a bool converts back, and nothing
 * else converts implicitly. Conversion errors use cty's wording and never show the value itself,
 * which may be a secret.
 */
import { HclError, type Value } from "./ast.js";

export type Obj = { [k: string]: Value };

export function isObj(v: Value | undefined): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `o[k]` for an own key only: a name like `constructor` is never found on the prototype. */
export function own(o: Obj, k: string): Value | undefined {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

/** A fresh object with `k`'s own keys set; `__proto__` is stored as a key, not a prototype. */
export function setKey(o: Obj, k: string, v: Value): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** cty's friendly name of a value's type, for errors. */
export function typeName(v: Value): string {
  if (v === null) return "null";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "tuple";
  return "object";
}

/** A number as cty prints it: integers without a decimal point, no exponent for ordinary sizes. */
export function numberText(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0);
  return String(n);
}

export function toStr(v: Value, what = "value"): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return numberText(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null) throw new HclError("Invalid value", `The ${what} is null; a string is required.`);
  throw new HclError("Invalid value", `The ${what} is a ${typeName(v)}; a string is required.`);
}

export function toNum(v: Value, what = "value"): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    const t = v.trim();
    if (t !== "" && t === v && /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) return Number(t);
    throw new HclError(
      "Invalid value",
      `The ${what} is a string that is not a number; a number is required.`,
    );
  }
  throw new HclError(
    "Invalid value",
    `The ${what} is ${v === null ? "null" : `a ${typeName(v)}`}; a number is required.`,
  );
}

export function toBool(v: Value, what = "value"): boolean {
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  throw new HclError(
    "Invalid value",
    `The ${what} is ${v === null ? "null" : `a ${typeName(v)}`}; a bool is required.`,
  );
}

export function toList(v: Value, what = "value"): Value[] {
  if (Array.isArray(v)) return v;
  throw new HclError(
    "Invalid value",
    `The ${what} is ${v === null ? "null" : `a ${typeName(v)}`}; a list is required.`,
  );
}

export function toObj(v: Value, what = "value"): Obj {
  if (isObj(v)) return v;
  throw new HclError(
    "Invalid value",
    `The ${what} is ${v === null ? "null" : `a ${typeName(v)}`}; a map or object is required.`,
  );
}

/** cty equality: same type and same value, collections compared element by element. */
export function equals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => equals(x, b[i]!));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && equals(a[k]!, b[k]!));
  }
  return false;
}

/** Elements with duplicates removed, first occurrence kept (how berth represents a cty set). */
export function distinct(xs: Value[]): Value[] {
  const out: Value[] = [];
  for (const x of xs) if (!out.some((y) => equals(x, y))) out.push(x);
  return out;
}

/** An object's keys in cty's iteration order (lexical). */
export function sortedKeys(o: Obj): string[] {
  return Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
