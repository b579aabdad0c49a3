/**
 * A token's policies compiled into one object the API asks (Nomad's acl.ACL, acl/acl.go):
 *
 * - Namespace rules: capabilities are the union over every policy's rule of the same name, except
 *   that `deny` in any of them leaves only `deny`. A namespace is matched by its exact rule first,
 *   else by the closest glob: the one whose length, less its `*`s, is nearest the name's (Nomad's
 *   `difference`); on a tie the glob last in byte order wins, as Nomad's stable sort leaves it.
 *   `*` asked as a namespace (a list over all namespaces) is allowed when any rule allows the op.
 * - node, agent, operator, quota, plugin: the most privileged level of any policy, deny winning
 *   (Nomad's maxPrivilege: deny > write > read > list; "scale" ranks as nothing).
 * - A management token may do everything; a token with no policies may do nothing.
 */
import type { Policy } from "./acl_policy.js";

type CapSet = Set<string>;

/** ryanuber/go-glob: `*` matches any run of characters (also none); nothing else is special. */
export function globMatch(pattern: string, subject: string): boolean {
  if (pattern === "") return subject === "";
  if (pattern === "*") return true;
  const parts = pattern.split("*");
  if (parts.length === 1) return subject === pattern;
  const leading = pattern.startsWith("*");
  const trailing = pattern.endsWith("*");
  let rest = subject;
  const end = parts.length - 1;
  for (let i = 0; i < end; i++) {
    const idx = rest.indexOf(parts[i]!);
    if (i === 0 ? !leading && idx !== 0 : idx < 0) return false;
    rest = rest.slice(idx + parts[i]!.length);
  }
  return trailing || rest.endsWith(parts[end]!);
}

function maxPrivilege(a: string, b: string): string {
  for (const level of ["deny", "write", "read", "list"]) if (a === level || b === level) return level;
  return "";
}

/** A rule table: exact names and globs apart, as Nomad keeps two radix trees. */
class Rules {
  readonly exact = new Map<string, CapSet>();
  readonly globs = new Map<string, CapSet>();

  /** Adds `caps` to the rule `name`; `deny` (already there or among them) leaves only deny. */
  add(name: string, caps: readonly string[], deny = "deny"): void {
    const table = name.includes("*") ? this.globs : this.exact;
    let set = table.get(name);
    if (!set) table.set(name, (set = new Set()));
    if (set.has(deny)) return;
    for (const cap of caps) {
      if (cap === deny) {
        set.clear();
        set.add(deny);
        return;
      }
      set.add(cap);
    }
  }

  match(name: string): CapSet | undefined {
    const exact = this.exact.get(name);
    if (exact) return exact;
    let best: { key: string; diff: number; caps: CapSet } | undefined;
    for (const [key, caps] of this.globs) {
      if (!globMatch(key, name)) continue;
      const diff = name.length - key.length + (key.split("*").length - 1);
      if (!best || diff < best.diff || (diff === best.diff && key > best.key)) best = { key, diff, caps };
    }
    return best?.caps;
  }

  any(pred: (caps: CapSet) => boolean): boolean {
    for (const caps of this.exact.values()) if (pred(caps)) return true;
    for (const caps of this.globs.values()) if (pred(caps)) return true;
    return false;
  }
}

export class Acl {
  private readonly namespaces = new Rules();
  private readonly nodePools = new Rules();
  private readonly hostVolumes = new Rules();
  private agent = "";
  private node = "";
  private operator = "";
  private quota = "";
  private plugin = "";
  private readonly operatorCaps = new Set<string>();

  private constructor(private readonly management: boolean) {}

  static management(): Acl {
    return new Acl(true);
  }

  /** Compiles parsed (and expanded) policies; no policies at all grants nothing. */
  static compile(policies: readonly Policy[]): Acl {
    const acl = new Acl(false);
    for (const p of policies) {
      for (const ns of p.namespaces) acl.namespaces.add(ns.name, ns.capabilities);
      for (const np of p.nodePools) acl.nodePools.add(np.name, np.capabilities);
      for (const hv of p.hostVolumes) acl.hostVolumes.add(hv.name, hv.capabilities);
      if (p.agent) acl.agent = maxPrivilege(acl.agent, p.agent.policy);
      if (p.node) acl.node = maxPrivilege(acl.node, p.node.policy);
      if (p.quota) acl.quota = maxPrivilege(acl.quota, p.quota.policy);
      if (p.plugin) acl.plugin = maxPrivilege(acl.plugin, p.plugin.policy);
      if (p.operator) {
        acl.operator = maxPrivilege(acl.operator, p.operator.policy);
        if (!acl.operatorCaps.has("deny")) {
          for (const cap of p.operator.capabilities) {
            if (cap === "deny") {
              acl.operatorCaps.clear();
              acl.operatorCaps.add("deny");
              break;
            }
            acl.operatorCaps.add(cap);
          }
        }
      }
    }
    return acl;
  }

  isManagement(): boolean {
    return this.management;
  }

  /** `ns` "*" asks whether any namespace allows `op` (the all-namespaces lists). */
  allowNamespaceOperation(ns: string, op: string): boolean {
    if (this.management) return true;
    if (ns === "*" && this.namespaces.any((c) => c.has(op))) return true;
    return this.namespaces.match(ns)?.has(op) ?? false;
  }

  /** Any of `ops` in `ns` (Nomad's NamespaceValidator). */
  allowNamespaceAnyOf(ns: string, ...ops: string[]): boolean {
    return ops.some((op) => this.allowNamespaceOperation(ns, op));
  }

  /** Whether any operation at all is allowed in `ns` (and it is not denied). */
  allowNamespace(ns: string): boolean {
    if (this.management) return true;
    const usable = (c: CapSet) => c.size > 0 && !c.has("deny");
    if (ns === "*" && this.namespaces.any(usable)) return true;
    const caps = this.namespaces.match(ns);
    return caps !== undefined && usable(caps);
  }

  allowHostVolumeOperation(name: string, op: string): boolean {
    return this.management || (this.hostVolumes.match(name)?.has(op) ?? false);
  }

  allowNodePoolOperation(pool: string, op: string): boolean {
    return this.management || (this.nodePools.match(pool)?.has(op) ?? false);
  }

  allowNodeRead(): boolean {
    return this.management || this.node === "write" || this.node === "read";
  }
  allowNodeWrite(): boolean {
    return this.management || this.node === "write";
  }
  allowAgentRead(): boolean {
    return this.management || this.agent === "write" || this.agent === "read";
  }
  allowAgentWrite(): boolean {
    return this.management || this.agent === "write";
  }
  allowOperatorRead(): boolean {
    return this.management || this.operator === "write" || this.operator === "read";
  }
  allowOperatorWrite(): boolean {
    return this.management || this.operator === "write";
  }
  allowOperatorOperation(op: string): boolean {
    return this.management || this.operator === "write" || this.operatorCaps.has(op);
  }
  allowQuotaRead(): boolean {
    return this.management || this.quota === "write" || this.quota === "read";
  }
  allowQuotaWrite(): boolean {
    return this.management || this.quota === "write";
  }
  /** Nomad's AllowPluginRead: `read` only (a `write` plugin rule does not grant it, as in Nomad). */
  allowPluginRead(): boolean {
    return this.management || this.plugin === "read";
  }
  allowPluginList(): boolean {
    return this.management || this.plugin === "read" || this.plugin === "list";
  }
}
