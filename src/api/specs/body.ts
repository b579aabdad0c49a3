/**
 * A typed reader over one HCL body as @cdktn/hcl2json decodes it: attributes are plain values,
 * blocks are arrays of objects, labelled blocks are `{label: [object]}`. Every accessor checks the
 * value's type and throws a SpecError that names the file and the place in it; `finish()` rejects
 * the keys nobody read, so an unsupported setting is an error rather than silently ignored.
 */
import { SpecError } from "../../hcl1/index.js";
import { parseDuration } from "./duration.js";
import { parseSize } from "./size.js";

// Defined in the pure hcl1/ layer, whose reader throws it too; re-exported for api/'s decoders.
export { SpecError };

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (v === null) return "null";
  if (isObj(v)) return "a block or map";
  return `${typeof v} ${JSON.stringify(v)}`;
}

export class Body {
  private readonly seen = new Set<string>();

  /** `where` names this body for errors, e.g. `group "cache"`; empty at the top level. */
  constructor(
    readonly file: string,
    readonly where: string,
    private readonly obj: Obj,
  ) {}

  static of(file: string, where: string, value: unknown): Body {
    if (!isObj(value))
      throw new SpecError(`${file}: ${where || "spec"} must be a block, got ${describe(value)}`);
    return new Body(file, where, value);
  }

  error(msg: string): SpecError {
    return new SpecError(`${this.file}: ${this.where ? `${this.where}: ` : ""}${msg}`);
  }

  private take(key: string): unknown {
    this.seen.add(key);
    return this.obj[key];
  }

  has(key: string): boolean {
    return this.obj[key] !== undefined;
  }

  string(key: string): string | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string") return v;
    // HCL converts primitives to a string attribute; keep that for numbers and bools.
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    throw this.error(`${key} must be a string, got ${describe(v)}`);
  }

  number(key: string): number | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === "number") return v;
    // HCL converts numeric strings to numbers.
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
    throw this.error(`${key} must be a number, got ${describe(v)}`);
  }

  integer(key: string): number | undefined {
    const n = this.number(key);
    if (n !== undefined && !Number.isInteger(n)) throw this.error(`${key} must be a whole number, got ${n}`);
    return n;
  }

  bool(key: string): boolean | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    throw this.error(`${key} must be true or false, got ${describe(v)}`);
  }

  stringList(key: string): string[] | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v;
    throw this.error(`${key} must be a list of strings, got ${describe(v)}`);
  }

  /** Nanoseconds from a duration string such as "30s" or "1h30m". */
  duration(key: string): number | undefined {
    const s = this.string(key);
    if (s === undefined) return undefined;
    const ns = parseDuration(s);
    if (ns === undefined)
      throw this.error(`${key} must be a duration such as "30s" or "1h30m", got ${JSON.stringify(s)}`);
    return ns;
  }

  /** Bytes from a size such as "10MiB" or "1G" (a bare number is bytes). */
  size(key: string): number | undefined {
    const raw = this.take(key);
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === "number" && Number.isInteger(raw) && raw >= 0) return raw;
    const bytes = typeof raw === "string" ? parseSize(raw) : undefined;
    if (bytes === undefined)
      throw this.error(`${key} must be a size such as "10MiB" or "1G", got ${describe(raw)}`);
    return bytes;
  }

  /** The objects of a block, written as a block (a list of bodies) or as a map attribute. */
  private bodies(key: string): Obj[] | undefined {
    const v = this.take(key);
    if (v === undefined || v === null) return undefined;
    if (isObj(v)) return [v];
    if (Array.isArray(v) && v.every(isObj)) return v;
    throw this.error(`${key} must be a block, got ${describe(v)}`);
  }

  /** A block that may appear once. */
  block(key: string): Body | undefined {
    const list = this.bodies(key);
    if (list === undefined) return undefined;
    if (list.length !== 1) throw this.error(`only one ${key} block is allowed, found ${list.length}`);
    return new Body(this.file, this.inner(key), list[0]!);
  }

  /** A block that may repeat, e.g. `capability`. */
  blocks(key: string): Body[] {
    return (this.bodies(key) ?? []).map((o, i) => new Body(this.file, this.inner(`${key}[${i}]`), o));
  }

  /** Labelled blocks (`group "name" {…}`), each label once, in the order the decoder gives them. */
  labelled(key: string): [string, Body][] {
    const v = this.take(key);
    if (v === undefined || v === null) return [];
    if (!isObj(v)) throw this.error(`${key} blocks need a label, e.g. ${key} "name" { … }`);
    return Object.entries(v).map(([label, bodies]) => {
      const list = Array.isArray(bodies) ? bodies : [bodies];
      if (list.length !== 1)
        throw this.error(`${key} ${JSON.stringify(label)} is defined ${list.length} times`);
      return [label, Body.of(this.file, this.inner(`${key} ${JSON.stringify(label)}`), list[0])];
    });
  }

  /** A map of strings, written as a block (`env { K = "v" }`) or a map attribute (`env = {…}`). */
  stringMap(key: string): Record<string, string> | undefined {
    const b = this.block(key);
    if (b === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const k of b.keys()) out[k] = b.string(k) ?? "";
    return out;
  }

  /** A free-form block (a task's `config`): values as the decoder gives them. */
  raw(key: string): Record<string, unknown> | undefined {
    const b = this.block(key);
    return b === undefined ? undefined : { ...b.obj };
  }

  keys(): string[] {
    return Object.keys(this.obj);
  }

  /** Throws naming every key that no accessor read. */
  finish(): void {
    const unknown = Object.keys(this.obj).filter((k) => !this.seen.has(k));
    if (unknown.length === 0) return;
    const list = unknown.map((k) => JSON.stringify(k)).join(", ");
    throw this.error(`unsupported ${unknown.length === 1 ? "key" : "keys"} ${list}`);
  }

  private inner(name: string): string {
    return this.where ? `${this.where} ${name}` : name;
  }
}
