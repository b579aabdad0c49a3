/**
 * Type constraints of `variable` blocks (HCL's typeexpr: `string`, `number`, `bool`, `any`,
 * `list(T)`, `set(T)`, `map(T)`, `object({name = T, …})`, `tuple([T, …])`) and cty's conversion
 * of a value to one. A variable without a `type` takes its default's type, as Nomad's does.
 * Errors name where in the value the conversion failed, never the value.
 */
import { HclError, type Node, type Value } from "./ast.js";
import { distinct, isObj, own, setKey, sortedKeys, toBool, toNum, toStr, type Obj } from "./values.js";

export type HclType =
  | { k: "string" | "number" | "bool" | "any" }
  | { k: "list" | "set" | "map"; elem: HclType }
  | { k: "object"; attrs: Record<string, HclType> }
  | { k: "tuple"; elems: HclType[] };

const PRIMITIVES = new Set(["string", "number", "bool", "any"]);

function bad(at: number, detail: string): HclError {
  return new HclError("Invalid type specification", detail, at);
}

/** The type a `type = …` expression denotes. */
export function typeFromExpr(x: Node): HclType {
  if (x.k === "var" && PRIMITIVES.has(x.name)) return { k: x.name as "string" };
  if (x.k === "var") throw bad(x.at, `The keyword "${x.name}" is not a valid type specification.`);
  if (x.k !== "call")
    throw bad(
      x.at,
      "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
    );
  const [arg, ...rest] = x.args;
  if (arg === undefined || rest.length > 0)
    throw bad(x.at, `The ${x.name} type constructor requires one argument specifying the element type.`);
  switch (x.name) {
    case "list":
    case "set":
    case "map":
      return { k: x.name, elem: typeFromExpr(arg) };
    case "object": {
      if (arg.k !== "object")
        throw bad(
          arg.at,
          "Object type constructor requires a map whose keys are attribute names and whose values are the corresponding attribute types.",
        );
      const attrs: Record<string, HclType> = {};
      for (const it of arg.items) {
        const key =
          it.key.k === "lit" && typeof it.key.v === "string"
            ? it.key.v
            : it.key.k === "var"
              ? it.key.name
              : undefined;
        if (key === undefined) throw bad(it.key.at, "Object constructor map keys must be attribute names.");
        attrs[key] = typeFromExpr(it.value);
      }
      return { k: "object", attrs };
    }
    case "tuple":
      if (arg.k !== "tuple") throw bad(arg.at, "Tuple type constructor requires a list of element types.");
      return { k: "tuple", elems: arg.items.map(typeFromExpr) };
    default:
      throw bad(x.at, `Keyword "${x.name}" is not a valid type constructor.`);
  }
}

/** The type of a value as cty infers it: collections as tuple and object types of their elements. */
export function typeOfValue(v: Value): HclType {
  if (typeof v === "string") return { k: "string" };
  if (typeof v === "number") return { k: "number" };
  if (typeof v === "boolean") return { k: "bool" };
  if (v === null) return { k: "any" };
  if (Array.isArray(v)) return { k: "tuple", elems: v.map(typeOfValue) };
  const attrs: Record<string, HclType> = {};
  for (const k of Object.keys(v)) attrs[k] = typeOfValue(v[k]!);
  return { k: "object", attrs };
}

/** How a type is spelled in a constraint, for errors. */
export function typeText(t: HclType): string {
  switch (t.k) {
    case "list":
    case "set":
    case "map":
      return `${t.k}(${typeText(t.elem)})`;
    case "object":
      return `object({${Object.keys(t.attrs)
        .map((k) => `${k}=${typeText(t.attrs[k]!)}`)
        .join(", ")}})`;
    case "tuple":
      return `tuple([${t.elems.map(typeText).join(", ")}])`;
    default:
      return t.k;
  }
}

/** Whether a `-var` value of this type is taken as a literal string rather than parsed as HCL. */
export function takesLiteralString(t: HclType | undefined): boolean {
  return t === undefined || t.k === "string" || t.k === "number";
}

/** `v` converted to `t`, or an error whose message is cty's (prefixed by the path that failed). */
export function convert(v: Value, t: HclType): Value {
  try {
    return conv(v, t);
  } catch (err) {
    if (err instanceof ConvError) throw new Error(err.message, { cause: err });
    throw err;
  }
}

class ConvError extends Error {}

function at(path: string, msg: string): ConvError {
  return new ConvError(path ? `${path}: ${msg}` : msg);
}

function conv(v: Value, t: HclType, path = ""): Value {
  if (t.k === "any" || v === null) return v;
  switch (t.k) {
    case "string":
      if (typeof v === "object") throw at(path, "string required");
      return toStr(v);
    case "number":
      if (typeof v === "object" || typeof v === "boolean") throw at(path, "number required");
      try {
        return toNum(v);
      } catch {
        throw at(path, "a number is required");
      }
    case "bool":
      if (typeof v === "object" || typeof v === "number") throw at(path, "bool required");
      try {
        return toBool(v);
      } catch {
        throw at(path, "a bool is required");
      }
    case "list":
    case "set": {
      if (!Array.isArray(v)) throw at(path, `${t.k} of ${typeText(t.elem)} required`);
      const out = v.map((x, i) => conv(x, t.elem, elemPath(path, `element ${i}`)));
      return t.k === "set" ? distinct(out) : out;
    }
    case "tuple": {
      if (!Array.isArray(v)) throw at(path, "tuple required");
      if (v.length !== t.elems.length)
        throw at(path, `tuple required with ${t.elems.length} elements, got ${v.length}`);
      return v.map((x, i) => conv(x, t.elems[i]!, elemPath(path, `element ${i}`)));
    }
    case "map": {
      if (!isObj(v)) throw at(path, `map of ${typeText(t.elem)} required`);
      const out: Obj = {};
      for (const k of sortedKeys(v))
        setKey(out, k, conv(v[k]!, t.elem, elemPath(path, `element ${JSON.stringify(k)}`)));
      return out;
    }
    case "object": {
      if (!isObj(v)) throw at(path, "object required");
      const out: Obj = {};
      for (const k of Object.keys(t.attrs)) {
        const x = own(v, k);
        if (x === undefined) throw at(path, `attribute ${JSON.stringify(k)} is required`);
        setKey(out, k, conv(x, t.attrs[k]!, elemPath(path, `attribute ${JSON.stringify(k)}`)));
      }
      const extra = Object.keys(v).find((k) => !Object.hasOwn(t.attrs, k));
      if (extra !== undefined) throw at(path, `unsupported attribute ${JSON.stringify(extra)}`);
      return out;
    }
  }
}

function elemPath(path: string, step: string): string {
  return path ? `${path}, ${step}` : step;
}
