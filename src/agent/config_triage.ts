/**
 * The first pass over an agent config document, on its syntax tree (so every finding names the
 * line): each key of a block berth knows (nomad_config_keys.ts) is kept when berth reads it,
 * dropped with a warning when only Nomad knows it, and refused when neither does — a typo
 * (`bind_adr`) stops the agent, as Nomad's decoder stops, while a working Nomad config starts
 * berth and says what berth leaves unused.
 *
 * Nested keys and labels are one chain here: `plugin "docker" { … }`, the one-line
 * `client "server_join" { … }` and HCL JSON's flattened `{"client": {"server_join": {…}}}` all come
 * as one item whose keys walk the paths one by one.
 */
import { Hcl1Error, type Item, type Node } from "./hcl1_source.js";
import { NOMAD_AGENT_KEYS } from "./nomad_config_keys.js";

/** The items berth reads, the others gone; `warnings` gets one line per key dropped. */
export function triageItems(file: string, items: Item[], path: string, warnings: string[]): Item[] {
  if (!NOMAD_AGENT_KEYS.has(path)) return items;
  return items.flatMap((item) => {
    const kept = triageItem(file, item, path, warnings);
    return kept ? [kept] : [];
  });
}

function triageItem(file: string, item: Item, path: string, warnings: string[]): Item | null {
  let at = path;
  for (const key of item.keys) {
    const rule = NOMAD_AGENT_KEYS.get(at);
    if (!rule) return item;
    const dotted = at === "" ? key.name : `${at}.${key.name}`;
    const where = `${file}:${key.pos.line}:${key.pos.col}`;
    if (rule.read.includes(key.name)) {
      at = dotted;
      continue;
    }
    const why = Object.hasOwn(rule.ignored, key.name) ? rule.ignored[key.name] : rule.otherwise;
    if (why === undefined) {
      throw new Hcl1Error(
        file,
        key.pos,
        `unknown key ${JSON.stringify(dotted)}: neither berth nor Nomad has it${known(at)}`,
      );
    }
    warnings.push(`${where}: ${dotted} is accepted but not used: ${why}`);
    return null;
  }
  return { keys: item.keys, val: triageNode(file, item.val, at, warnings) };
}

function triageNode(file: string, n: Node, path: string, warnings: string[]): Node {
  if (n.kind === "object") return { ...n, items: triageItems(file, n.items, path, warnings) };
  if (n.kind === "list") return { ...n, items: n.items.map((e) => triageNode(file, e, path, warnings)) };
  return n;
}

/** " (berth reads here: …)" to help with a typo. */
function known(path: string): string {
  const rule = NOMAD_AGENT_KEYS.get(path);
  if (!rule) return "";
  return ` (${path === "" ? "at the top" : `in ${path}`} berth reads: ${rule.read.join(", ")})`;
}
