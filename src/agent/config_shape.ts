/**
 * An agent config document → the value the typed reader (api/specs/body.ts) walks.
 *
 * hashicorp/hcl v1 decodes a document into a generic value in which every block is a list of maps
 * and a label is one more level of nesting: `host_volume "a" { path = "/x" }` is
 * `{host_volume: [{a: [{path: "/x"}]}]}`, exactly what `host_volume { a { path = "/x" } }` gives
 * (hcl v1 does not tell them apart, and neither does Nomad). Body reads labelled blocks as one map
 * `{label: [body, …]}`, so the keys Nomad's config decodes as labelled (LABELLED) are regrouped
 * that way; a label written twice keeps both bodies, which Body refuses by name.
 *
 * HCL's JSON form is flattened as hcl v1 flattens it: `{"client": {"meta": {…}, "host_volume":
 * {…}}}` (an object whose values are all objects) becomes one `client` item per inner key, so one
 * JSON object decodes to several `client` maps; Nomad's decoder still fills one ClientConfig from
 * them. So a list of maps is folded into one map when they do not set the same plain value (their
 * blocks and lists concatenate); two blocks that do clash stay apart, and Body refuses them
 * ("only one client block is allowed").
 */
import { triageItems } from "./config_triage.js";
import { decodeItems, parseHcl1, type Value } from "./hcl1_source.js";

/** Dotted paths of the labelled blocks in Nomad's agent config that berth reads. */
const LABELLED = new Set(["plugin", "client.host_volume"]);

/** The document's value, without the Nomad keys berth does not use (each one a line in `warnings`). */
export function agentConfigValue(file: string, text: string, warnings: string[]): Record<string, unknown> {
  const items = triageItems(file, parseHcl1(file, text), "", warnings);
  return shapeMap(decodeItems(file, items), "");
}

type ValueMap = { [k: string]: Value };

function isMap(v: Value): v is ValueMap {
  return typeof v === "object" && !Array.isArray(v);
}

function shape(v: Value, at: string): unknown {
  if (Array.isArray(v)) {
    const folded = v.length > 1 && v.every(isMap) ? fold(v) : undefined;
    return folded ? [shapeMap(folded, at)] : v.map((e) => shape(e, at));
  }
  if (isMap(v)) return shapeMap(v, at);
  return v;
}

/** One map from several, lists concatenated; undefined when two of them set the same plain value. */
function fold(maps: ValueMap[]): ValueMap | undefined {
  const out: ValueMap = {};
  for (const m of maps) {
    for (const [k, v] of Object.entries(m)) {
      const old = Object.hasOwn(out, k) ? out[k] : undefined;
      if (old === undefined) setOwn(out, k, v);
      else if (Array.isArray(old) && Array.isArray(v)) setOwn(out, k, [...old, ...v]);
      else return undefined;
    }
  }
  return out;
}

function shapeMap(m: ValueMap, at: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) {
    const p = at === "" ? k : `${at}.${k}`;
    setOwn(out, k, LABELLED.has(p) ? (byLabel(v, p) ?? shape(v, p)) : shape(v, p));
  }
  return out;
}

/** `o[k] = v` as an own property even for a key such as `__proto__` (which Body then refuses). */
function setOwn(o: object, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/**
 * `[{a: [body]}, {b: [body]}]` → `{a: [body], b: [body]}`; undefined when `v` is not a list of
 * labelled blocks (an attribute, or a block without a label), which Body then refuses.
 */
function byLabel(v: Value, at: string): Record<string, unknown[]> | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Record<string, unknown[]> = {};
  for (const block of v) {
    if (!isMap(block)) return undefined;
    for (const [label, bodies] of Object.entries(block)) {
      if (!Array.isArray(bodies) || !bodies.every(isMap)) return undefined;
      if (!Object.hasOwn(out, label)) setOwn(out, label, []);
      out[label]!.push(...bodies.map((b) => shape(b, `${at}.*`)));
    }
  }
  return out;
}
