/**
 * Runs a parsed filter (parse.ts) against one item: the JSON object a list answers (its stub).
 * Semantics as go-bexpr's:
 *   - the value is read as the selected field's type: a number field compares numerically, a bool
 *     field takes `true`/`false`; a value that does not convert is an error (not a false match);
 *   - `in` / `contains` test a substring of a string, an element of a list, a key of a map;
 *   - `is empty` is true for a missing map key, null, "", [] and {}; only strings, lists and maps
 *     (and null) can be tested for emptiness;
 *   - `matches` takes a regular expression and applies to strings only;
 *   - a first-level field the item does not have is an error (a typo in a field name should not
 *     read as "nothing matched"); a missing key deeper in (a map key) reads as absent: `==` is
 *     false, `!=` true, `is empty` true.
 * Pure; errors are FilterEvalError with the selector in the message.
 */
import type { Expr, Selector } from "./parse.js";

export class FilterEvalError extends Error {}

const ABSENT = Symbol("absent");
type Found = unknown;

function show(sel: Selector): string {
  return sel
    .map((s, i) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? (i === 0 ? s : `.${s}`) : `[${JSON.stringify(s)}]`))
    .join("");
}

function resolve(item: unknown, sel: Selector): Found {
  let cur: unknown = item;
  for (const [i, step] of sel.entries()) {
    if (cur === null || cur === undefined) return ABSENT;
    if (typeof cur !== "object" || Array.isArray(cur)) {
      throw new FilterEvalError(
        `error finding value in datum: ${show(sel)}: ${show(sel.slice(0, i))} is not a map or a struct`,
      );
    }
    if (!Object.hasOwn(cur, step)) {
      if (i === 0)
        throw new FilterEvalError(
          `error finding value in datum: ${show(sel)}: no field named ${JSON.stringify(step)}`,
        );
      return ABSENT;
    }
    cur = (cur as Record<string, unknown>)[step];
  }
  return cur;
}

/** `value` as the type of `field` (a scalar), or an error naming both. */
function coerce(field: unknown, value: string, sel: Selector): unknown {
  if (typeof field === "number") {
    const n = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) ? Number(value) : NaN;
    if (Number.isNaN(n)) throw new FilterEvalError(`${show(sel)}: ${JSON.stringify(value)} is not a number`);
    return n;
  }
  if (typeof field === "boolean") {
    if (value !== "true" && value !== "false")
      throw new FilterEvalError(`${show(sel)}: ${JSON.stringify(value)} is not a bool (true or false)`);
    return value === "true";
  }
  return value;
}

function equals(field: unknown, value: string, sel: Selector): boolean {
  if (field === ABSENT || field === null) return false;
  if (typeof field === "object")
    throw new FilterEvalError(
      `${show(sel)}: a list or map cannot be compared with ==/!= (use "in", "contains" or "is empty")`,
    );
  return coerce(field, value, sel) === field;
}

function contains(field: unknown, value: string, sel: Selector): boolean {
  if (field === ABSENT || field === null) return false;
  if (typeof field === "string") return field.includes(value);
  if (Array.isArray(field)) {
    return field.some((el) => el !== null && typeof el !== "object" && coerce(el, value, sel) === el);
  }
  if (typeof field === "object") return Object.hasOwn(field, value);
  throw new FilterEvalError(`${show(sel)}: "in"/"contains" need a string, a list or a map`);
}

function isEmpty(field: unknown, sel: Selector): boolean {
  if (field === ABSENT || field === null) return true;
  if (typeof field === "string") return field === "";
  if (Array.isArray(field)) return field.length === 0;
  if (typeof field === "object") return Object.keys(field).length === 0;
  throw new FilterEvalError(`${show(sel)}: "is empty" needs a string, a list or a map`);
}

export function evaluate(e: Expr, item: unknown): boolean {
  switch (e.kind) {
    case "and":
      return evaluate(e.left, item) && evaluate(e.right, item);
    case "or":
      return evaluate(e.left, item) || evaluate(e.right, item);
    case "not":
      return !evaluate(e.operand, item);
    case "match": {
      const field = resolve(item, e.selector);
      switch (e.op) {
        case "==":
          return equals(field, e.value, e.selector);
        case "!=":
          return !equals(field, e.value, e.selector);
        case "in":
        case "contains":
          return contains(field, e.value, e.selector);
        case "not in":
        case "not contains":
          return !contains(field, e.value, e.selector);
        case "is empty":
          return isEmpty(field, e.selector);
        case "is not empty":
          return !isEmpty(field, e.selector);
        case "matches":
        case "not matches": {
          if (field === ABSENT || field === null) return e.op === "not matches";
          if (typeof field !== "string")
            throw new FilterEvalError(`${show(e.selector)}: "matches" needs a string`);
          return e.regex!.matcher(field).find() === (e.op === "matches");
        }
      }
    }
  }
}
