/**
 * The operations of the language on values: attribute access, indexing and the binary operators,
 * with HCL's error texts (never showing the values).
 */
import { HclError, type Value } from "./ast.js";
import { equals, isObj, own, toBool, toNum, toStr, typeName } from "./values.js";

export function getAttr(o: Value, name: string, at: number): Value {
  if (o === null)
    throw new HclError(
      "Attempt to get attribute from null value",
      "This value is null, so it does not have any attributes.",
      at,
    );
  if (!isObj(o))
    throw new HclError("Unsupported attribute", `Can't access attributes on a ${typeName(o)} value.`, at);
  const v = own(o, name);
  if (v === undefined)
    throw new HclError(
      "Unsupported attribute",
      `This object does not have an attribute named ${JSON.stringify(name)}.`,
      at,
    );
  return v;
}

export function getIndex(c: Value, k: Value, at: number): Value {
  if (c === null)
    throw new HclError(
      "Attempt to index null value",
      "This value is null, so it does not have any indices.",
      at,
    );
  if (Array.isArray(c)) {
    let i: number;
    try {
      i = toNum(k, "index");
    } catch {
      throw new HclError(
        "Invalid index",
        "The given key does not identify an element in this collection value: a number is required.",
        at,
      );
    }
    if (!Number.isInteger(i) || i < 0 || i >= c.length) {
      throw new HclError(
        "Invalid index",
        "The given key does not identify an element in this collection value.",
        at,
      );
    }
    return c[i]!;
  }
  if (isObj(c)) {
    if (typeof k === "object")
      throw new HclError(
        "Invalid index",
        "The given key does not identify an element in this collection value: a string is required.",
        at,
      );
    const v = own(c, toStr(k));
    if (v === undefined)
      throw new HclError(
        "Invalid index",
        "The given key does not identify an element in this collection value.",
        at,
      );
    return v;
  }
  throw new HclError("Invalid index", `This value does not have any indices (it is a ${typeName(c)}).`, at);
}

export function num(v: Value, at: number): number {
  try {
    return toNum(v, "operand");
  } catch (err) {
    throw relocate(err, at);
  }
}

export function bool(v: Value, at: number): boolean {
  try {
    return toBool(v, "operand");
  } catch (err) {
    throw relocate(err, at);
  }
}

function relocate(err: unknown, at: number): unknown {
  return err instanceof HclError && err.at < 0 ? new HclError(err.summary, err.detail, at) : err;
}

/** `l op r` for HCL's binary operators; `lat`/`rat` locate the operands for errors. */
export function binaryOp(op: string, l: Value, r: Value, lat: number, rat: number, at: number): Value {
  switch (op) {
    case "==":
      return equals(l, r);
    case "!=":
      return !equals(l, r);
    case "&&":
      return bool(l, lat) && bool(r, rat);
    case "||":
      return bool(l, lat) || bool(r, rat);
  }
  const a = num(l, lat);
  const b = num(r, rat);
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      if (b === 0)
        throw new HclError(
          "Error in function call",
          'Call to function "divide" failed: can\'t divide by zero.',
          at,
        );
      return a / b;
    case "%":
      if (b === 0)
        throw new HclError(
          "Error in function call",
          'Call to function "modulo" failed: can\'t use modulo by zero.',
          at,
        );
      return a % b;
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    default:
      return a >= b;
  }
}
