/**
 * Nomad's volume spec (`volume create|register FILE`, HCL 1 or HCL's JSON form) → the API's volume,
 * decoded as Nomad's CLI decodes it (command/volume_register_csi.go):
 *  - `type` must be "csi" (any case); Nomad's CLI refuses a spec without it.
 *  - The plain keys are weakly typed as Nomad's mapstructure.WeakDecode reads them: the names match
 *    case-insensitively, a number becomes its decimal text and a bool "1"/"0" in a string field,
 *    `secrets`/`parameters`/`context` blocks (repeatable, merged) become string maps.
 *  - `capacity_min`/`capacity_max`: the first one written counts, read from the literal's text with
 *    go-humanize (size.ts); "" is 0.
 *  - `capability` blocks (keys checked: access_mode, attachment_mode), the first `mount_options`
 *    block (fs_type, mount_flags), `topology_request { required|preferred { topology { segments
 *    {…} } } }`: a segments block with no entries is dropped, and so is a `required`/`preferred` with
 *    nothing left (null), but `topology_request {}` itself is kept as an empty request, as Nomad
 *    sends it. An unknown key inside these blocks is refused, naming it and its line.
 *  - Any other top-level key is ignored, as Nomad ignores it; berth names it through `warn`.
 * Only the keys the spec sets appear in the result, so the server's defaults apply to the rest.
 */
import { SpecError } from "./body.js";
import {
  Hcl1Error,
  decodeItems,
  describeNode,
  elem,
  filter,
  itemPos,
  parseHcl1,
  type Item,
  type Node,
  type Value,
} from "../../hcl1/index.js";
import { parseSizeOrReason } from "./size.js";
import type {
  CSITopology,
  CSITopologyRequest,
  CSIVolumeSpec,
  MountOptions,
  VolumeCapability,
} from "../types.js";

export interface VolumeSpecOptions {
  /** Told about what the spec holds that Nomad (and so berth) ignores, e.g. an unknown key. */
  warn?: (message: string) => void;
}

export function parseVolumeHcl(file: string, text: string, opts: VolumeSpecOptions = {}): CSIVolumeSpec {
  return volumeFromItems(file, parseHcl1(file, text), opts);
}

type StringKey = "ID" | "Name" | "Namespace" | "ExternalID" | "PluginID" | "SnapshotID" | "CloneID";
const STRINGS: [string, StringKey][] = [
  ["id", "ID"],
  ["name", "Name"],
  ["namespace", "Namespace"],
  ["external_id", "ExternalID"],
  ["plugin_id", "PluginID"],
  ["snapshot_id", "SnapshotID"],
  ["clone_id", "CloneID"],
];
const MAPS: [string, "Secrets" | "Parameters" | "MutableParameters" | "Context"][] = [
  ["secrets", "Secrets"],
  ["parameters", "Parameters"],
  // berth's (CSI's mutable_parameters; Nomad's spec has no such key): see README "Modify a volume".
  ["mutable_parameters", "MutableParameters"],
  ["context", "Context"],
];
/** The keys Nomad's decoder reads by hand (matched exactly, not case-insensitively). */
const SPECIAL = ["type", "capability", "mount_options", "capacity_min", "capacity_max", "topology_request"];

export function volumeFromItems(file: string, items: Item[], opts: VolumeSpecOptions = {}): CSIVolumeSpec {
  refuseInterpolation(file, "", items);
  const m = decodeItems(file, items);
  const lastItem = (key: string) => items.findLast((i) => i.keys[0]?.name === key)!;
  const fail = (key: string, problem: string): never => {
    throw new Hcl1Error(file, itemPos(lastItem(key)), `${key} ${problem}`);
  };
  checkType(file, m, fail);

  const vol: CSIVolumeSpec = {};
  const used = new Set(SPECIAL);
  // mapstructure: the exact field name first, then any key equal to it ignoring case.
  const find = (name: string) =>
    Object.hasOwn(m, name) ? name : Object.keys(m).find((k) => k.toLowerCase() === name);
  for (const [name, field] of STRINGS) {
    const key = find(name);
    if (key === undefined) continue;
    used.add(key);
    vol[field] = weakString(m[key]!) ?? fail(key, `must be a string, got ${describeValue(m[key]!)}`);
  }
  for (const [name, field] of MAPS) {
    const key = find(name);
    if (key === undefined) continue;
    used.add(key);
    vol[field] = weakStringMap(m[key]!, (problem) => fail(key, problem));
  }
  for (const key of Object.keys(m).filter((k) => !used.has(k))) {
    const p = itemPos(lastItem(key));
    opts.warn?.(
      `${file}:${p.line}:${p.col}: ignoring key ${JSON.stringify(key)}: Nomad's volume spec has no such key`,
    );
  }

  for (const key of ["capacity_min", "capacity_max"] as const) {
    const bytes = capacity(file, key, elem(filter(items, key))[0]);
    if (bytes !== undefined)
      vol[key === "capacity_min" ? "RequestedCapacityMin" : "RequestedCapacityMax"] = bytes;
  }
  const caps = elem(filter(items, "capability")).map((o) => capability(file, o));
  if (caps.length > 0) vol.RequestedCapabilities = caps;
  const mount = elem(filter(items, "mount_options"))[0];
  if (mount !== undefined) vol.MountOptions = mountOptions(file, mount);
  const topos = elem(filter(items, "topology_request"));
  if (topos.length > 0) vol.RequestedTopologies = topologyRequest(file, topos, opts);
  return vol;
}

/**
 * Nomad's volume decoder evaluates nothing: `"${var.pw}"` would reach the plugin as that literal
 * text, which is never what its author meant (issue 10), so berth refuses it, naming the place and
 * never the value.
 */
function refuseInterpolation(file: string, path: string, items: Item[]): void {
  const walk = (where: string, n: Node): void => {
    if (n.kind === "object") refuseInterpolation(file, where, n.items);
    else if (n.kind === "list") n.items.forEach((e, i) => walk(`${where}[${i}]`, e));
    else if (typeof n.value === "string" && n.value.includes("${"))
      throw new Hcl1Error(
        file,
        n.pos,
        `${where}: "\${…}" is not evaluated in a volume spec (it would be sent as literal text): write the value itself`,
      );
  };
  for (const i of items) walk([path, ...i.keys.map((k) => k.name)].filter((x) => x !== "").join("."), i.val);
}

function checkType(
  file: string,
  m: Record<string, Value>,
  fail: (key: string, problem: string) => never,
): void {
  if (!Object.hasOwn(m, "type")) {
    throw new SpecError(`${file}: type is missing: a volume spec names its type, type = "csi"`);
  }
  const t = weakString(m.type!) ?? fail("type", `must be a string, got ${describeValue(m.type!)}`);
  if (t.toLowerCase() === "csi") return;
  fail("type", `${JSON.stringify(t)} is not a volume type berth knows: berth's volumes are "csi"`);
}

/** A scalar as mapstructure's weak decoding writes it into a string; undefined for blocks and lists. */
function weakString(v: Value): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "1" : "0";
  if (typeof v === "number") return plainNumber(v);
  return undefined;
}

/** The shortest digits of `v` without an exponent, as Go's strconv.FormatFloat(v, 'f', -1, 64). */
export function plainNumber(v: number): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(v));
  if (!m) return String(v);
  const digits = m[2]! + (m[3] ?? "");
  const point = 1 + Number(m[4]);
  let out: string;
  if (point >= digits.length) out = digits + "0".repeat(point - digits.length);
  else if (point <= 0) out = `0.${"0".repeat(-point)}${digits}`;
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return m[1]! + out;
}

function weakStringMap(v: Value, fail: (problem: string) => never): Record<string, string> {
  const maps = Array.isArray(v) ? v : [v];
  const out: Record<string, string> = {};
  for (const part of maps) {
    if (typeof part !== "object" || Array.isArray(part))
      return fail(`must be a block of strings, got ${describeValue(v)}`);
    for (const [k, x] of Object.entries(part)) {
      out[k] = weakString(x) ?? fail(`${k} must be a string, got ${describeValue(x)}`);
    }
  }
  return out;
}

function describeValue(v: Value): string {
  if (Array.isArray(v))
    return v.every((x) => typeof x === "object" && !Array.isArray(x)) ? "a block" : "a list";
  if (typeof v === "object") return "a block";
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** The block body of `o`, refusing keys not in `valid` (Nomad's helper.CheckHCLKeys). */
function checkedBody(file: string, what: string, o: Item, valid: string[]): Item[] {
  if (o.val.kind !== "object")
    throw new Hcl1Error(file, o.val.pos, `${what} must be a block, got ${describeNode(o.val)}`);
  const bad = o.val.items.find((i) => !valid.includes(i.keys[0]!.name));
  if (bad) {
    throw new Hcl1Error(
      file,
      itemPos(bad),
      `${what}: invalid key: ${bad.keys[0]!.name} (valid keys: ${valid.join(", ")})`,
    );
  }
  return o.val.items;
}

function capacity(file: string, key: string, o: Item | undefined): number | undefined {
  if (o === undefined) return undefined;
  const v: Node = o.val;
  if (v.kind !== "literal")
    throw new Hcl1Error(file, v.pos, `${key} must be a size such as "10GiB", got ${describeNode(v)}`);
  // Nomad reads the token's text with its quotes trimmed, not the string's value.
  const text = v.text.replace(/^"+|"+$/g, "");
  if (text === "") return 0;
  const r = parseSizeOrReason(text);
  if ("bytes" in r) return r.bytes;
  throw new Hcl1Error(file, v.pos, `invalid ${key}: could not parse value as bytes: ${r.reason}`);
}

function capability(file: string, o: Item): VolumeCapability {
  const body = decodeItems(file, checkedBody(file, "capability", o, ["access_mode", "attachment_mode"]));
  const field = (k: string) => {
    if (!Object.hasOwn(body, k)) return "";
    const s = weakString(body[k]!);
    if (s === undefined)
      throw new Hcl1Error(
        file,
        o.val.pos,
        `capability: ${k} must be a string, got ${describeValue(body[k]!)}`,
      );
    return s;
  };
  return { AccessMode: field("access_mode"), AttachmentMode: field("attachment_mode") };
}

/** The first mount_options block, decoded as hcl v1 decodes it into Nomad's CSIMountOptions. */
function mountOptions(file: string, o: Item): MountOptions {
  const items = checkedBody(file, "mount_options", o, ["fs_type", "mount_flags"]);
  decodeItems(file, items); // refuses redefinitions hcl v1 refuses
  const last = (k: string) => items.findLast((i) => i.keys[0]!.name === k);
  const opts: MountOptions = { FSType: "", MountFlags: [] };
  const fs = last("fs_type");
  if (fs !== undefined) {
    const s = literalString(fs.val);
    if (s === undefined)
      throw new Hcl1Error(
        file,
        itemPos(fs),
        `mount_options: fs_type must be a string, got ${describeNode(fs.val)}`,
      );
    opts.FSType = s;
  }
  const flags = last("mount_flags");
  if (flags !== undefined) {
    const list = flags.val.kind === "list" ? flags.val.items.map(literalString) : [undefined];
    if (list.some((f) => f === undefined))
      throw new Hcl1Error(
        file,
        itemPos(flags),
        `mount_options: mount_flags must be a list of strings, got ${describeNode(flags.val)}`,
      );
    opts.MountFlags = list as string[];
  }
  return opts;
}

/** A literal as hcl v1 decodes it into a Go string: strings by value, numbers and bools as written. */
function literalString(n: Node): string | undefined {
  if (n.kind !== "literal") return undefined;
  return n.type === "string" || n.type === "heredoc" ? String(n.value) : n.text;
}

/** A scalar as hcl v1 decodes it into a string: numbers and bools as written. */
function scalarText(v: Value): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

type Blocks = Record<string, Value>[];

function topologyRequest(file: string, topos: Item[], opts: VolumeSpecOptions): CSITopologyRequest {
  const req: CSITopologyRequest = { Required: null, Preferred: null };
  // As in Nomad, each topology_request block replaces what an earlier one set.
  for (const o of topos) {
    const items = checkedBody(file, "topology_request", o, ["preferred", "required"]);
    const decoded = decodeItems(file, items);
    const blocks = (v: Value | undefined, what: string): Blocks => {
      if (v === undefined) return [];
      if (Array.isArray(v) && v.every((x) => typeof x === "object" && !Array.isArray(x))) return v as Blocks;
      throw new Hcl1Error(
        file,
        o.val.pos,
        `topology_request: ${what} must be a block, got ${describeValue(v)}`,
      );
    };
    const topologies = (key: string): CSITopology[] | null => {
      // The first required (preferred) block holding a non-empty segments block counts.
      for (const block of blocks(decoded[key], key)) {
        const found: CSITopology[] = [];
        for (const t of blocks(block.topology, `${key}.topology`)) {
          for (const seg of blocks(t.segments, `${key}.topology.segments`)) {
            const segments: Record<string, string> = {};
            for (const [k, v] of Object.entries(seg)) {
              const s = scalarText(v);
              if (s === undefined)
                throw new Hcl1Error(
                  file,
                  o.val.pos,
                  `topology_request: ${key}.topology.segments.${k} must be a string, got ${describeValue(v)}`,
                );
              segments[k] = s;
            }
            if (Object.keys(segments).length > 0) found.push({ Segments: segments });
          }
        }
        if (found.length > 0) {
          if (blocks(decoded[key], key).indexOf(block) < blocks(decoded[key], key).length - 1)
            opts.warn?.(
              `${file}:${o.val.pos.line}:${o.val.pos.col}: topology_request: only the first ${key} block with segments counts (as in Nomad); put every topology in one ${key} block`,
            );
          return found;
        }
      }
      return null;
    };
    req.Required = topologies("required");
    req.Preferred = topologies("preferred");
  }
  return req;
}
