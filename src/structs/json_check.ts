/**
 * Small typed readers for untrusted JSON (API bodies, jobspecs, volume specs). Each one names the
 * field it refuses, so an operator sees `Volumes[0].Capacity: must be a number`, never a stack.
 */
import { validationError } from "./errors.js";

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function asObject(field: string, v: unknown): JsonObject {
  if (!isObject(v)) throw validationError(field, "must be an object");
  return v;
}

/** An optional object: undefined and null read as undefined. */
export function optObject(field: string, v: unknown): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  return asObject(field, v);
}

export function optString(field: string, v: unknown, dflt: string): string {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "string") throw validationError(field, "must be a string");
  return v;
}

export function optBool(field: string, v: unknown, dflt: boolean): boolean {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "boolean") throw validationError(field, "must be a boolean");
  return v;
}

/**
 * A finite number; `integer` refuses fractions and integers past 2^53 - 1 (they would lose
 * precision: a 1e300 count or a capacity past 2^64 is refused here, not stored), `min`/`max` refuse
 * values outside the range.
 */
export function optNumber(
  field: string,
  v: unknown,
  dflt: number,
  opts: { integer?: boolean; min?: number; max?: number } = {},
): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v)) throw validationError(field, "must be a number");
  if (opts.integer && !Number.isInteger(v)) throw validationError(field, "must be an integer");
  const max = opts.integer ? Math.min(opts.max ?? Infinity, Number.MAX_SAFE_INTEGER) : opts.max;
  if (opts.min !== undefined && v < opts.min) throw validationError(field, `must be at least ${opts.min}`);
  if (max !== undefined && v > max) throw validationError(field, `must be at most ${max}`);
  return v;
}

export function optArray(field: string, v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw validationError(field, "must be an array");
  return v;
}

export function optStringArray(field: string, v: unknown, dflt: string[]): string[] {
  if (v === undefined || v === null) return dflt;
  return optArray(field, v).map((s, i) => {
    if (typeof s !== "string") throw validationError(`${field}[${i}]`, "must be a string");
    return s;
  });
}

/** A string→string map; values that are numbers or booleans are refused, not coerced. */
export function optStringMap(field: string, v: unknown): Record<string, string> {
  const obj = optObject(field, v);
  const out: Record<string, string> = {};
  if (!obj) return out;
  for (const [k, val] of Object.entries(obj)) {
    if (typeof val !== "string") throw validationError(`${field}.${k}`, "must be a string");
    out[k] = val;
  }
  return out;
}

/** Refuses a value outside `allowed`, listing what would have been accepted. */
export function oneOf<T extends string>(field: string, v: unknown, allowed: readonly T[], what: string): T {
  if (typeof v === "string" && (allowed as readonly string[]).includes(v)) return v as T;
  if (v === undefined || v === null || v === "") throw validationError(field, "is required");
  return failOneOf(field, v, allowed, what);
}

function failOneOf(field: string, v: unknown, allowed: readonly string[], what: string): never {
  throw validationError(
    field,
    `unknown ${what} ${JSON.stringify(v)} (want one of ${allowed.map((a) => JSON.stringify(a)).join(", ")})`,
  );
}

/** Like oneOf, but an absent value reads as `dflt`. */
export function optOneOf<T extends string>(
  field: string,
  v: unknown,
  allowed: readonly T[],
  what: string,
  dflt: T,
): T {
  if (v === undefined || v === null || v === "") return dflt;
  return oneOf(field, v, allowed, what);
}

/**
 * How deep API bodies may nest arrays and objects. Go's decoder (Nomad's) stops at 10,000 levels;
 * berth's validators, redaction and stores walk values recursively and would overflow the stack
 * long before that (a body nested ~5,000 deep answered 500), while no real job or volume spec nests
 * more than a dozen levels, free-form task `Config` included.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The deepest nesting of arrays and objects in a JSON text, counted in one pass without parsing
 * (brackets inside strings, escaped quotes included, do not count), so a body can be refused
 * before JSON.parse builds it and recursive code meets it. Malformed text is counted as far as it
 * goes; JSON.parse reports what is wrong with it.
 */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
