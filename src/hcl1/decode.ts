/**
 * Items → the generic value hashicorp/hcl v1 gives when it decodes a document into
 * `map[string]interface{}` (what Nomad's volume decoder starts from):
 *  - the top level, and every object inside a list, is a map;
 *  - a block or object value under a key is a list of maps, one per occurrence, so repeated blocks
 *    (`capability { … }` twice) are a list of two, and a one-line nested block
 *    `topology { segments { rack = "R1" } }` is `{topology: [{segments: [{rack: "R1"}]}]}`;
 *  - labels nest: `a "x" "y" { … }` is `{a: [{x: [{y: [{…}]}]}]}`, one list element per block;
 *  - integers and floats are numbers, heredocs strings;
 *  - a repeated key appends when it holds blocks or lists (`x = [1]` then `x = [2]` is `[1, 2]`)
 *    and otherwise the later value wins, converted to the earlier one's type as hcl v1 converts it
 *    (a string keeps a later number's text); a later value hcl v1 cannot convert is an error, and
 *    so is mixing labelled and unlabelled blocks under one key.
 */
import { Hcl1Error, describeNode, filter, itemPos, type Item, type Literal, type Node } from "./ast.js";

export type Value = string | number | boolean | Value[] | { [k: string]: Value };
type Map = { [k: string]: Value };

export function decodeItems(file: string, items: Item[]): Map {
  const out: Map = {};
  const done = new Set<string>();
  for (const item of items) {
    const key = item.keys[0]!.name;
    if (done.has(key)) continue;
    const old = Object.hasOwn(out, key) ? out[key] : undefined;
    if (item.keys.length > 1) {
      done.add(key);
      // Every block under this key, labels kept: each one becomes a map {label: …}.
      const labelled = filter(items, key);
      const bare = labelled.find((i) => i.keys.length === 0);
      if (bare !== undefined || (old !== undefined && !Array.isArray(old)))
        throw new Hcl1Error(
          file,
          itemPos(bare ?? item),
          `${key}: labelled and unlabelled blocks cannot be mixed`,
        );
      out[key] = [...(old ?? []), ...labelled.map((i) => decodeItems(file, [i]))];
      continue;
    }
    out[key] = merge(file, key, old, item.val);
  }
  return out;
}

/** A value inside a list, or at the top of a list element: objects are maps there. */
function element(file: string, n: Node): Value {
  if (n.kind === "object") return decodeItems(file, n.items);
  if (n.kind === "list") return n.items.map((e) => element(file, e));
  return n.value;
}

function merge(file: string, key: string, old: Value | undefined, n: Node): Value {
  if (old === undefined) {
    if (n.kind === "object") return [decodeItems(file, n.items)];
    return element(file, n);
  }
  const clash = (): never => {
    throw new Hcl1Error(
      file,
      n.pos,
      `${key} is defined again as ${describeNode(n)}, which does not fit its earlier value`,
    );
  };
  if (Array.isArray(old)) {
    if (n.kind === "object") return [...old, decodeItems(file, n.items)];
    if (n.kind === "list") return [...old, ...n.items.map((e) => element(file, e))];
    return clash();
  }
  if (n.kind !== "literal") return clash();
  return convertLiteral(old, n) ?? clash();
}

/** A later literal in the type of an earlier scalar, as hcl v1 converts it; undefined when it cannot. */
function convertLiteral(old: Value, n: Literal): Value | undefined {
  if (typeof old === "string") return n.type === "string" || n.type === "heredoc" ? n.value : n.text;
  if (typeof old === "number") {
    if (typeof n.value === "number") return n.value;
    if (typeof n.value === "string" && /^-?\d+$/.test(n.value)) return Number(n.value);
    return undefined;
  }
  if (typeof old === "boolean" && typeof n.value === "boolean") return n.value;
  return undefined;
}
