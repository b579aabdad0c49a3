/**
 * A strict decoder of JSON into the Go structs of Nomad's `api` package (go_structs.ts), as Go's
 * encoding/json with DisallowUnknownFields would decode it — stricter where Nomad's server never
 * sends the looser form:
 *   - a field the struct does not have fails (Go's own match is case-insensitive; here the case
 *     must be exact, as Nomad's server writes it);
 *   - string/bool/number must be JSON strings/booleans/numbers; int*, uint* must be integers in
 *     range (uint* not negative); time.Time an RFC 3339 string (Go's time.Time.UnmarshalJSON);
 *     time.Duration an integer (nanoseconds);
 *   - null is accepted only where Go can hold it: *T, []T, map[K]T, interface{};
 *   - []byte is a base64 string.
 * Every failure names the JSON path (`$.Volumes[0].ResourceExhausted`) and what was found.
 */
import { GO_NAMED, GO_STRUCTS, type GoStructField } from "./go_structs.js";

export class GoDecodeError extends Error {}

/** Fields accepted beyond a struct's own: struct name → field → Go type. */
export type ExtraFields = Record<string, Record<string, string>>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const INT_RANGES: Record<string, [bigint, bigint]> = {
  int: [-(2n ** 63n), 2n ** 63n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  int8: [-128n, 127n],
  uint: [0n, 2n ** 64n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  uint16: [0n, 65535n],
  uint8: [0n, 255n],
  byte: [0n, 255n],
  "time.Duration": [-(2n ** 63n), 2n ** 63n - 1n],
};

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** The fields of a struct, embedded structs' fields flattened in (Go's promotion). */
function fieldsOf(name: string): Map<string, string> {
  const def = GO_STRUCTS[name];
  if (!def) throw new GoDecodeError(`no Go struct named ${name} is described`);
  const out = new Map<string, string>();
  const add = (fs: GoStructField[]) => {
    for (const f of fs) {
      if ("embed" in f) add(GO_STRUCTS[f.embed] ?? []);
      else if (!out.has(f.name)) out.set(f.name, f.type);
    }
  };
  add(def);
  return out;
}

/** Checks `value` against the Go type `type` (Go syntax); throws GoDecodeError at the first problem. */
export function decodeGo(value: unknown, type: string, path = "$", extra: ExtraFields = {}): void {
  const fail = (want: string): never => {
    throw new GoDecodeError(`${path}: want ${want} (Go ${type}), got ${describe(value)}`);
  };
  if (type.startsWith("*")) {
    if (value === null) return;
    return decodeGo(value, type.slice(1), path, extra);
  }
  if (type === "[]byte") {
    if (value === null) return;
    if (typeof value !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) fail("a base64 string");
    return;
  }
  if (type.startsWith("[]")) {
    if (value === null) return;
    if (!Array.isArray(value)) fail("an array");
    (value as unknown[]).forEach((el, i) => decodeGo(el, type.slice(2), `${path}[${i}]`, extra));
    return;
  }
  const map = /^map\[(\w+)\](.+)$/.exec(type);
  if (map) {
    if (value === null) return;
    if (typeof value !== "object" || Array.isArray(value)) fail("an object");
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (map[1] !== "string" && !/^-?\d+$/.test(k))
        throw new GoDecodeError(`${path}: key ${JSON.stringify(k)} is not a Go ${map[1]}`);
      decodeGo(v, map[2]!, `${path}[${JSON.stringify(k)}]`, extra);
    }
    return;
  }
  if (type === "interface{}" || type === "any") return;
  if (type === "string") {
    if (typeof value !== "string") fail("a string");
    return;
  }
  if (type === "bool") {
    if (typeof value !== "boolean") fail("a bool");
    return;
  }
  if (type === "float64" || type === "float32") {
    if (typeof value !== "number") fail("a number");
    return;
  }
  const range = INT_RANGES[type];
  if (range) {
    if (typeof value !== "number" || !Number.isInteger(value)) fail("an integer");
    const n = BigInt(value as number);
    if (n < range[0] || n > range[1]) fail(`an integer in [${range[0]}, ${range[1]}]`);
    return;
  }
  if (type === "time.Time") {
    if (typeof value !== "string" || !RFC3339.test(value) || Number.isNaN(Date.parse(value)))
      fail("an RFC 3339 time string");
    return;
  }
  const named = GO_NAMED[type];
  if (named !== undefined) return decodeGo(value, named, path, extra);
  if (GO_STRUCTS[type]) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) fail("an object");
    const fields = fieldsOf(type);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const ft = fields.get(k) ?? extra[type]?.[k];
      if (ft === undefined)
        throw new GoDecodeError(`${path}: unknown field ${JSON.stringify(k)} in Go struct api.${type}`);
      decodeGo(v, ft, `${path}.${k}`, extra);
    }
    return;
  }
  throw new GoDecodeError(`${path}: the Go type ${type} is not described`);
}
