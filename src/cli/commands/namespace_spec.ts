/**
 * Nomad's namespace specification for `namespace apply FILE` (command/namespace_apply.go), in HCL 1
 * or, with `-json`, as the API's JSON:
 *
 *   name        = "prod"
 *   description = "Production"
 *   quota       = ""
 *   meta { owner = "ops" }
 *   capabilities {
 *     enabled_task_drivers  = ["exec"]
 *     disabled_task_drivers = ["raw_exec"]
 *   }
 *
 * As Nomad decodes it: the plain keys weakly (names matched ignoring case, a number or bool becomes
 * its text), `meta` blocks merged into one string map, the first `capabilities` block with its four
 * list keys; a key Nomad would not read is reported through `warn`, never silently dropped.
 */
import {
  Hcl1Error,
  decodeItems,
  elem,
  filter,
  itemPos,
  parseHcl1,
  type Item,
  type Value,
} from "../../hcl1/index.js";
import { SpecError, type NamespaceCapabilities, type NamespaceSpec } from "../../api/index.js";

const PLAIN: [string, "Name" | "Description" | "Quota"][] = [
  ["name", "Name"],
  ["description", "Description"],
  ["quota", "Quota"],
];
const CAPS: [string, keyof NamespaceCapabilities][] = [
  ["enabled_task_drivers", "EnabledTaskDrivers"],
  ["disabled_task_drivers", "DisabledTaskDrivers"],
  ["enabled_network_modes", "EnabledNetworkModes"],
  ["disabled_network_modes", "DisabledNetworkModes"],
];

export function parseNamespaceHcl(
  file: string,
  text: string,
  warn: (m: string) => void = () => {},
): NamespaceSpec {
  const items = parseHcl1(file, text);
  const m = decodeItems(file, items);
  const at = (key: string): Item => items.findLast((i) => i.keys[0]?.name === key)!;
  const fail = (key: string, problem: string): never => {
    throw new Hcl1Error(file, itemPos(at(key)), `${key} ${problem}`);
  };
  const out: Partial<NamespaceSpec> = {};
  const used = new Set(["meta", "capabilities"]);
  for (const [name, field] of PLAIN) {
    const key = Object.hasOwn(m, name) ? name : Object.keys(m).find((k) => k.toLowerCase() === name);
    if (key === undefined) continue;
    used.add(key);
    out[field] = weak(m[key]!) ?? fail(key, "must be a string");
  }
  for (const key of Object.keys(m).filter((k) => !used.has(k))) {
    const p = itemPos(at(key));
    warn(
      `${file}:${p.line}:${p.col}: ignoring key ${JSON.stringify(key)}: not a namespace field berth knows`,
    );
  }
  if (Object.hasOwn(m, "meta")) out.Meta = meta(m.meta!, (problem) => fail("meta", problem));
  const caps = elem(filter(items, "capabilities"))[0];
  if (caps !== undefined) out.Capabilities = capabilities(file, caps);
  if (typeof out.Name !== "string" || out.Name === "") {
    throw new SpecError(`${file}: name is missing: a namespace spec names it, name = "..."`);
  }
  return out as NamespaceSpec;
}

/** A scalar as mapstructure's weak decoding writes it into a string; undefined otherwise. */
function weak(v: Value): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "1" : "0";
  if (typeof v === "number") return String(v);
  return undefined;
}

function meta(v: Value, fail: (problem: string) => never): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of Array.isArray(v) ? v : [v]) {
    if (typeof part !== "object" || Array.isArray(part)) return fail("must be a block of strings");
    for (const [k, x] of Object.entries(part)) out[k] = weak(x) ?? fail(`${k} must be a string`);
  }
  return out;
}

function capabilities(file: string, block: Item): NamespaceCapabilities {
  if (block.val.kind !== "object") throw new Hcl1Error(file, block.val.pos, "capabilities must be a block");
  const caps: NamespaceCapabilities = {
    EnabledTaskDrivers: null,
    DisabledTaskDrivers: null,
    EnabledNetworkModes: null,
    DisabledNetworkModes: null,
  };
  for (const item of block.val.items) {
    const key = item.keys[0]!.name;
    const field = CAPS.find(([k]) => k === key)?.[1];
    if (field === undefined) {
      throw new Hcl1Error(
        file,
        itemPos(item),
        `capabilities: invalid key: ${key} (valid keys: ${CAPS.map(([k]) => k).join(", ")})`,
      );
    }
    const n = item.val;
    if (n.kind !== "list" || n.items.some((e) => e.kind !== "literal" || typeof e.value !== "string")) {
      throw new Hcl1Error(file, n.pos, `capabilities.${key} must be a list of strings`);
    }
    caps[field] = n.items.map((e) => (e.kind === "literal" ? String(e.value) : ""));
  }
  return caps;
}
