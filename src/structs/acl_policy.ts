/**
 * Nomad's ACL policy language (acl/policy.go): a policy's `Rules` text, HCL 1 or its JSON form,
 * parsed into typed rules with the shorthand `policy = "..."` expanded into capabilities exactly as
 * Nomad expands it. Error texts are Nomad's (`Invalid namespace policy: &acl.NamespacePolicy{...}`).
 *
 *   namespace "prod-*" {
 *     policy       = "read"                     # deny | read | write | scale
 *     capabilities = ["csi-mount-volume"]       # added to what `policy` grants
 *     variables { path "app/*" { capabilities = ["read"] } }
 *   }
 *   node     { policy = "read" }                # deny | read | write (| scale, as Nomad accepts)
 *   agent    { policy = "read" }
 *   operator { policy = "read" }
 *   quota    { policy = "read" }
 *   plugin   { policy = "list" }                # deny | read | list | write
 *   host_volume "data" { policy = "write" }
 *   node_pool "default" { policy = "read" }
 *
 * `strict` (policy writes) refuses unknown keys, at the top as Nomad does ("Invalid or duplicate
 * policy keys") and, unlike Nomad, inside blocks too: a misspelt `polcy` that silently grants
 * nothing is worse than an error. Lenient parsing (evaluating stored policies) ignores them.
 */
import { Hcl1Error, decodeItems, filter, parseHcl1, type Item, type Value } from "../hcl1/index.js";
import {
  PLUGIN_POLICIES,
  POLICY_LEVELS,
  expandHostVolumePolicy,
  expandNamespaceCapabilities,
  expandNamespacePolicy,
  expandNodePoolPolicy,
  expandOperatorPolicy,
  expandSentinelPolicy,
  expandVariablesCapabilities,
  isHostVolumeCapability,
  isNamespaceCapability,
  isNodePoolCapability,
  isOperatorCapability,
  isSentinelCapability,
  isVariablesCapability,
} from "./acl_capabilities.js";

export interface NamespacePolicy {
  name: string;
  policy: string;
  capabilities: string[];
  variables?: { paths: { pathSpec: string; capabilities: string[] }[] };
}
/** A `node_pool` or `host_volume` rule: a glob name, a shorthand and capabilities. */
export interface NamedPolicy {
  name: string;
  policy: string;
  capabilities: string[];
}
export interface LevelPolicy {
  policy: string;
}
export interface LevelCapsPolicy {
  policy: string;
  capabilities: string[];
}

export interface Policy {
  namespaces: NamespacePolicy[];
  nodePools: NamedPolicy[];
  hostVolumes: NamedPolicy[];
  agent?: LevelPolicy;
  node?: LevelPolicy;
  operator?: LevelCapsPolicy;
  sentinel?: LevelCapsPolicy;
  quota?: LevelPolicy;
  plugin?: LevelPolicy;
  raw: string;
}

/** A policy text Nomad would refuse; the message is Nomad's. */
export class PolicyError extends Error {
  override readonly name = "PolicyError";
}

/** Nomad's validNamespace and validVolume (host volumes). */
const VALID_NAMESPACE = /^[a-zA-Z0-9*-]{1,128}$/;
/** Nomad's validNodePool. */
const VALID_NODE_POOL = /^[a-zA-Z0-9_*-]{1,128}$/;

const TOP_KEYS = [
  "namespace",
  "node_pool",
  "host_volume",
  "agent",
  "node",
  "operator",
  "sentinel",
  "quota",
  "plugin",
];

/** Parses `rules`; strict for writes (unknown keys refused), lenient to evaluate stored policies. */
export function parsePolicy(rules: string, strict: boolean): Policy {
  const p: Policy = { namespaces: [], nodePools: [], hostVolumes: [], raw: rules };
  if (rules === "") return p;
  const extra: string[] = [];
  try {
    const items = parseHcl1("policy", rules);
    for (const item of items) {
      const key = item.keys[0]?.name ?? "";
      if (!TOP_KEYS.includes(key.toLowerCase())) extra.push(key);
    }
    p.namespaces = labelled(items, "namespace").map(([name, body]) => namespaceRule(name, body, strict));
    p.nodePools = labelled(items, "node_pool").map(([name, b]) => named(name, b, strict));
    p.hostVolumes = labelled(items, "host_volume").map(([name, b]) => named(name, b, strict));
    const agent = single(items, "agent", extra, strict);
    if (agent) p.agent = { policy: str(agent, "policy") };
    const node = single(items, "node", extra, strict);
    if (node) p.node = { policy: str(node, "policy") };
    const operator = single(items, "operator", extra, strict, ["capabilities"]);
    if (operator)
      p.operator = { policy: str(operator, "policy"), capabilities: strs(operator, "capabilities") };
    const sentinel = single(items, "sentinel", extra, strict, ["capabilities"]);
    if (sentinel)
      p.sentinel = { policy: str(sentinel, "policy"), capabilities: strs(sentinel, "capabilities") };
    const quota = single(items, "quota", extra, strict);
    if (quota) p.quota = { policy: str(quota, "policy") };
    const plugin = single(items, "plugin", extra, strict);
    if (plugin) p.plugin = { policy: str(plugin, "policy") };
  } catch (err) {
    if (err instanceof Hcl1Error)
      throw new PolicyError(`Failed to parse ACL Policy: At ${err.pos.line}:${err.pos.col}: ${err.problem}`);
    if (err instanceof DecodeError) throw new PolicyError(`Failed to parse ACL Policy: ${err.message}`);
    throw err;
  }
  if (isEmpty(p)) throw new PolicyError(`Invalid policy: ${rules}`);
  validate(p, extra, strict);
  return p;
}

export function isEmpty(p: Policy): boolean {
  return (
    p.namespaces.length === 0 &&
    p.nodePools.length === 0 &&
    p.hostVolumes.length === 0 &&
    [p.agent, p.node, p.operator, p.sentinel, p.quota, p.plugin].every((x) => x === undefined)
  );
}

/** A namespace's variables block: at least one path, none starting with '/', known capabilities (expanded). */
function validateVariables(
  namespace: string,
  variables: NonNullable<Policy["namespaces"][number]["variables"]>,
): void {
  if (variables.paths.length === 0)
    throw new PolicyError(`Invalid variable policy: no variable paths in namespace ${namespace}`);
  for (const path of variables.paths) {
    if (path.pathSpec === "")
      throw new PolicyError(`Invalid missing variable path in namespace ${namespace}`);
    if (path.pathSpec.startsWith("/"))
      throw new PolicyError(
        `Invalid variable path "${path.pathSpec}" in namespace ${namespace}: cannot start with a leading '/'\``,
      );
    for (const cap of path.capabilities) {
      if (!isVariablesCapability(cap))
        throw new PolicyError(`Invalid variable capability '${cap}' in namespace ${namespace}`);
    }
    path.capabilities = expandVariablesCapabilities(path.capabilities);
  }
}

function validate(p: Policy, extra: string[], strict: boolean): void {
  for (const ns of p.namespaces) {
    if (!VALID_NAMESPACE.test(ns.name)) throw new PolicyError(`Invalid namespace name: ${goNamespace(ns)}`);
    if (ns.policy !== "" && !POLICY_LEVELS.includes(ns.policy))
      throw new PolicyError(`Invalid namespace policy: ${goNamespace(ns)}`);
    for (const cap of ns.capabilities) {
      if (!isNamespaceCapability(cap))
        throw new PolicyError(`Invalid namespace capability '${cap}': ${goNamespace(ns)}`);
    }
    if (ns.policy !== "") ns.capabilities.push(...expandNamespacePolicy(ns.policy));
    ns.capabilities = expandNamespaceCapabilities(ns.capabilities);
    if (ns.variables) validateVariables(ns.name, ns.variables);
  }
  for (const np of p.nodePools) {
    if (!VALID_NODE_POOL.test(np.name)) throw new PolicyError(`Invalid node pool name '${np.name}'`);
    if (np.policy !== "" && !POLICY_LEVELS.includes(np.policy))
      throw new PolicyError(`Invalid node pool policy '${np.policy}' for '${np.name}'`);
    for (const cap of np.capabilities) {
      if (!isNodePoolCapability(cap))
        throw new PolicyError(`Invalid node pool capability '${cap}' for '${np.name}'`);
    }
    if (np.policy !== "") np.capabilities.push(...expandNodePoolPolicy(np.policy));
  }
  for (const hv of p.hostVolumes) {
    if (!VALID_NAMESPACE.test(hv.name)) throw new PolicyError(`Invalid host volume name: ${goNamed(hv)}`);
    if (hv.policy !== "" && !POLICY_LEVELS.includes(hv.policy))
      throw new PolicyError(`Invalid host volume policy: ${goNamed(hv)}`);
    for (const cap of hv.capabilities) {
      if (!isHostVolumeCapability(cap))
        throw new PolicyError(`Invalid host volume capability '${cap}': ${goNamed(hv)}`);
    }
    if (hv.policy !== "") hv.capabilities.push(...expandHostVolumePolicy(hv.policy));
  }
  if (extra.length > 0 && strict)
    throw new PolicyError(`Invalid or duplicate policy keys: ${extra.join(", ")}`);
  const level = (what: string, type: string, x: LevelPolicy | undefined) => {
    if (x && !POLICY_LEVELS.includes(x.policy))
      throw new PolicyError(`Invalid ${what} policy: &acl.${type}{Policy:${goStr(x.policy)}}`);
  };
  level("agent", "AgentPolicy", p.agent);
  level("node", "NodePolicy", p.node);
  levelCaps(p.operator, "operator", "OperatorPolicy", isOperatorCapability, expandOperatorPolicy);
  levelCaps(p.sentinel, "sentinel", "SentinelPolicy", isSentinelCapability, expandSentinelPolicy);
  level("quota", "QuotaPolicy", p.quota);
  if (p.plugin && !PLUGIN_POLICIES.includes(p.plugin.policy))
    throw new PolicyError(`Invalid plugin policy: &acl.PluginPolicy{Policy:${goStr(p.plugin.policy)}}`);
}

function levelCaps(
  x: LevelCapsPolicy | undefined,
  what: string,
  type: string,
  valid: (cap: string) => boolean,
  expand: (policy: string) => string[],
): void {
  if (!x) return;
  if (x.policy !== "" && !POLICY_LEVELS.includes(x.policy))
    throw new PolicyError(
      `Invalid ${what} policy: &acl.${type}{Policy:${goStr(x.policy)}, Capabilities:${goList(x.capabilities)}}`,
    );
  for (const cap of x.capabilities) {
    if (!valid(cap)) throw new PolicyError(`Invalid ${what} capability '${cap}'`);
  }
  if (x.policy !== "") x.capabilities.push(...expand(x.policy));
}

/** A shape error below the HCL syntax (a list where a string belongs, a block without a label). */
class DecodeError extends Error {}

type Body = { [k: string]: Value };

/**
 * The `key "label" { … }` blocks as [label, body] pairs. A block without its label gets the name ""
 * (refused by the name check, as Nomad's decoder fix-up makes it); more than one label, or a value
 * that is not a block, is a shape error.
 */
function labelled(items: Item[], key: string): [string, Item][] {
  return matching(items, key).map((i) => {
    if (i.keys.length > 1)
      throw new DecodeError(`${key} "${i.keys[0]!.name}": a ${key} block takes one label`);
    if (i.val.kind !== "object") throw new DecodeError(`${key} must be a block, not a value`);
    return [i.keys[0]?.name ?? "", i];
  });
}

/** An unlabelled block such as `node { … }`; a second one is a duplicate key. */
function single(
  items: Item[],
  key: string,
  extra: string[],
  strict: boolean,
  more: string[] = [],
): Body | undefined {
  const found = matching(items, key);
  if (found.length === 0) return undefined;
  if (found.length > 1) extra.push(key);
  const item = found[0]!;
  if (item.keys.length > 0 || item.val.kind !== "object")
    throw new DecodeError(`${key} must be a block without a label, like ${key} { policy = "read" }`);
  const body = decodeItems("policy", item.val.items);
  unknownKeys(body, ["policy", ...more], key, strict);
  return body;
}

function matching(items: Item[], key: string): Item[] {
  return items
    .filter((i) => i.keys[0]?.name.toLowerCase() === key)
    .flatMap((i) => filter([i], i.keys[0]!.name));
}

function namespaceRule(name: string, item: Item, strict: boolean): NamespacePolicy {
  const b = bodyOf(item);
  unknownKeys(b, ["policy", "capabilities", "variables"], `namespace "${name}"`, strict);
  const ns: NamespacePolicy = { name, policy: str(b, "policy"), capabilities: strs(b, "capabilities") };
  const vars = field(b, "variables");
  if (vars !== undefined) ns.variables = { paths: variablePaths(name, vars, strict) };
  return ns;
}

function named(name: string, item: Item, strict: boolean): NamedPolicy {
  const b = bodyOf(item);
  unknownKeys(b, ["policy", "capabilities"], `"${name}"`, strict);
  return { name, policy: str(b, "policy"), capabilities: strs(b, "capabilities") };
}

function bodyOf(item: Item): Body {
  return item.val.kind === "object" ? decodeItems("policy", item.val.items) : {};
}

/** `variables { path "a/*" { capabilities = [...] } }`, as decoded: a list of one block. */
function variablePaths(
  ns: string,
  v: Value,
  strict: boolean,
): { pathSpec: string; capabilities: string[] }[] {
  const blocks = Array.isArray(v) ? v : [v];
  const out: { pathSpec: string; capabilities: string[] }[] = [];
  for (const block of blocks) {
    if (typeof block !== "object" || Array.isArray(block))
      throw new DecodeError(`namespace "${ns}": variables must be a block`);
    unknownKeys(block, ["path"], `namespace "${ns}" variables`, strict);
    const paths = field(block, "path");
    for (const entry of paths === undefined ? [] : Array.isArray(paths) ? paths : [paths]) {
      if (typeof entry !== "object" || Array.isArray(entry))
        throw new DecodeError(`namespace "${ns}": variables path must be a block`);
      const labels = Object.keys(entry);
      // An unlabelled `path { capabilities = [...] }` decodes to its body: Nomad names it "".
      if (labels.some((l) => l.toLowerCase() === "capabilities")) {
        out.push({ pathSpec: "", capabilities: strs(entry, "capabilities") });
        continue;
      }
      for (const label of labels) {
        for (const body of asBlocks(entry[label]!)) {
          unknownKeys(body, ["capabilities"], `namespace "${ns}" path "${label}"`, strict);
          out.push({ pathSpec: label, capabilities: strs(body, "capabilities") });
        }
      }
    }
  }
  return out;
}

function asBlocks(v: Value): Body[] {
  const list = Array.isArray(v) ? v : [v];
  return list.filter((x): x is Body => typeof x === "object" && !Array.isArray(x));
}

/** A field of a decoded body, its name matched ignoring case as hcl v1 matches Go field names. */
function field(b: Body, name: string): Value | undefined {
  const k = Object.keys(b).find((x) => x.toLowerCase() === name);
  return k === undefined ? undefined : b[k];
}

function str(b: Body, name: string): string {
  const v = field(b, name);
  if (v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new DecodeError(`${name} must be a string`);
}

function strs(b: Body, name: string): string[] {
  const v = field(b, name);
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw new DecodeError(`${name} must be a list of strings, like ["read-job"]`);
  return [...(v as string[])];
}

/** Strict parsing refuses keys a block does not have (see the file comment); lenient ignores them. */
function unknownKeys(b: Body, known: string[], where: string, strict: boolean): void {
  const bad = Object.keys(b).filter((k) => !known.includes(k.toLowerCase()));
  if (bad.length > 0 && strict)
    throw new PolicyError(`Invalid or duplicate policy keys: ${where}: ${bad.join(", ")}`);
}

// Go's %#v of the rules Nomad names in its errors, so an error reads as Nomad's does.
function goStr(s: string): string {
  return JSON.stringify(s);
}
function goList(l: string[]): string {
  return l.length === 0 ? "[]string(nil)" : `[]string{${l.map(goStr).join(", ")}}`;
}
function goNamespace(ns: NamespacePolicy): string {
  const vars = ns.variables ? "&acl.VariablesPolicy{…}" : "(*acl.VariablesPolicy)(nil)";
  return `&acl.NamespacePolicy{Name:${goStr(ns.name)}, Policy:${goStr(ns.policy)}, Capabilities:${goList(ns.capabilities)}, Variables:${vars}}`;
}
function goNamed(hv: NamedPolicy): string {
  return `&acl.HostVolumePolicy{Name:${goStr(hv.name)}, Policy:${goStr(hv.policy)}, Capabilities:${goList(hv.capabilities)}}`;
}
