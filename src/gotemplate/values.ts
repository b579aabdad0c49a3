/**
 * Values of the template language and how Go prints and tests them. A value is a string, a number,
 * a boolean, null (Go's nil), `undefined` (Go's "no value": a missing map key, or the template's
 * dot, which Nomad renders with no data), a list, or a map (a plain object, e.g. from parseJSON).
 * Go tells ints from floats; here both are numbers, printed as Go prints an int when integral.
 */
export type Value = string | number | boolean | null | undefined | Value[] | { [key: string]: Value };

export type ValueMap = { [key: string]: Value };

export function isMap(v: Value): v is ValueMap {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e21 on. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  if (Number.isNaN(n)) return "NaN";
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf";
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) return goExponent(n.toExponential());
  return String(n);
}

/** JS exponent notation (`1e-5`, `1.5e+21`) as Go writes it (`1e-05`, `1.5e+21`). */
export function goExponent(s: string): string {
  return s.replace(/e([+-])(\d)$/, "e$10$2");
}

/** The text Go's fmt prints for a value with `%v` (and what `{{ … }}` outputs). */
export function printValue(v: Value): string {
  if (v === undefined) return "<no value>";
  if (v === null) return "<nil>";
  if (typeof v === "string") return v;
  if (typeof v === "number") return formatNumber(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return `[${v.map(inner).join(" ")}]`;
  return `map[${Object.keys(v)
    .sort()
    .map((k) => `${k}:${inner(v[k])}`)
    .join(" ")}]`;
}

/** Inside a list or map Go prints nil as `<nil>` whatever its origin. */
function inner(v: Value): string {
  return v === undefined ? "<nil>" : printValue(v);
}

/** Go's template truth: false, 0, "", nil and empty lists and maps are false. */
export function truth(v: Value): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  return Object.keys(v).length > 0;
}

export function typeName(v: Value): string {
  if (v === undefined || v === null) return "<nil>";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float64";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

/** Go's `eq` of two values: basic kinds of the same kind only. */
export function equal(a: Value, b: Value): boolean {
  const na = a === undefined || a === null;
  const nb = b === undefined || b === null;
  if (na || nb) return na && nb;
  if (typeof a === "object" || typeof b === "object") throw new Error("non-comparable types");
  if (typeof a !== typeof b) throw new Error("incompatible types for comparison");
  return a === b;
}

/** Go's `lt`: numbers with numbers, strings with strings. */
export function less(a: Value, b: Value): boolean {
  if (typeof a === "number" && typeof b === "number") return a < b;
  if (typeof a === "string" && typeof b === "string")
    return Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;
  if (typeof a === "boolean" || typeof b === "boolean" || typeof a === "object" || typeof b === "object")
    throw new Error("invalid type for comparison");
  throw new Error("incompatible types for comparison");
}

/** Go's `len`: bytes of a string, elements of a list or map. */
export function length(v: Value): number {
  if (typeof v === "string") return Buffer.byteLength(v);
  if (Array.isArray(v)) return v.length;
  if (isMap(v)) return Object.keys(v).length;
  throw new Error(`len of type ${typeName(v)}`);
}

/** JSON as Go's encoding/json writes it: map keys sorted, `<`, `>`, `&` escaped unless `unescaped`. */
export function toJson(v: Value, indent = "", unescaped = false): string {
  const sorted = (x: Value): unknown => {
    if (Array.isArray(x)) return x.map(sorted);
    if (isMap(x))
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, sorted(x[k])]),
      );
    return x === undefined ? null : x;
  };
  const s = JSON.stringify(sorted(v), null, indent) ?? "null";
  if (unescaped) return s;
  return s.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
