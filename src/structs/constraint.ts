/**
 * Nomad's placement constraints and their operators, with the semantics of Nomad's
 * scheduler/feasible checkConstraint. `LTarget` / `RTarget` are each a literal or a node attribute
 * (`${node.unique.name}`, `${node.unique.id}`, `${node.datacenter}`, `${node.class}`,
 * `${node.pool}`, `${attr.NAME}` from the node's fingerprinted Attributes, `${meta.NAME}` from its
 * Meta). An attribute the node lacks resolves to "" and "not found": `=`/`<`/`regexp`/`version`/
 * set operators are then false, `!=` compares "" with the other side (so it is true unless both
 * are missing), `is_set` false and `is_not_set` true — as in Nomad.
 * `distinct_hosts` and `distinct_property` are not node predicates (they count allocs; see the
 * scheduler) and are always met here. Job, group and task constraints all apply to every alloc of
 * the group. Pure.
 */
import { ownEntry, type Node } from "./node.js";
import { parseVersion, parseVersionConstraint, type VersionConstraint } from "./version_constraint.js";

export interface Constraint {
  LTarget: string;
  RTarget: string;
  Operand: string;
}

export const DISTINCT_HOSTS = "distinct_hosts";
export const DISTINCT_PROPERTY = "distinct_property";

/** Every operand Nomad's Constraint.Validate accepts. */
export const CONSTRAINT_OPERANDS = [
  "=",
  "==",
  "is",
  "!=",
  "not",
  "<",
  "<=",
  ">",
  ">=",
  "regexp",
  "version",
  "semver",
  "set_contains",
  "set_contains_all",
  "set_contains_any",
  "is_set",
  "is_not_set",
  DISTINCT_HOSTS,
  DISTINCT_PROPERTY,
] as const;

/** Nomad's default node pool: berth has no node pools, so every node is in it. */
export const DEFAULT_NODE_POOL = "default";

const ATTRIBUTES: Record<string, (n: Node) => string> = {
  "${node.unique.name}": (n) => n.Name,
  "${node.unique.id}": (n) => n.ID,
  "${node.datacenter}": (n) => n.Datacenter,
  "${node.class}": (n) => n.NodeClass,
  "${node.pool}": () => DEFAULT_NODE_POOL,
};

/** `${attr.NAME}` / `${meta.NAME}`: the node's fingerprinted attributes and its operator meta. */
const MAP_ATTRIBUTE = /^\$\{(attr|meta)\.([^}]+)\}$/;

export const CONSTRAINT_ATTRIBUTES: readonly string[] = [
  ...Object.keys(ATTRIBUTES),
  "${attr.<name>}",
  "${meta.<name>}",
];

export function isConstraintAttribute(s: string): boolean {
  return Object.hasOwn(ATTRIBUTES, s) || MAP_ATTRIBUTE.test(s);
}

/**
 * Nomad's resolveTarget: a literal is itself (found); an attribute is the node's value, or
 * ["", false] when the node lacks it.
 */
export function resolveTarget(target: string, node: Node): [string, boolean] {
  if (!target.startsWith("${")) return [target, true];
  if (Object.hasOwn(ATTRIBUTES, target)) return [ATTRIBUTES[target]!(node), true];
  const m = MAP_ATTRIBUTE.exec(target);
  if (!m) return ["", false];
  const v = ownEntry(m[1] === "attr" ? node.Attributes : node.Meta, m[2]!);
  return typeof v === "string" ? [v, true] : ["", false];
}

/**
 * Parsed regexps and version constraints, keyed by their text. One per plan (or per test): a
 * right-hand side is parsed once however many nodes are checked. Unparseable ones are cached as
 * null (never met), as Nomad's checkers answer false for them.
 */
export class ConstraintCache {
  readonly regexps = new Map<string, RegExp | null>();
  readonly versions = new Map<string, VersionConstraint | null>();

  regexp(s: string): RegExp | null {
    let re = this.regexps.get(s);
    if (re === undefined) {
      re = compileRegexp(s);
      this.regexps.set(s, re);
    }
    return re;
  }

  version(s: string, lang: "version" | "semver"): VersionConstraint | null {
    const key = `${lang}:${s}`;
    let vc = this.versions.get(key);
    if (vc === undefined) {
      try {
        vc = parseVersionConstraint(s, lang);
      } catch {
        vc = null;
      }
      this.versions.set(key, vc);
    }
    return vc;
  }
}

/**
 * A Go RE2 pattern as a JavaScript RegExp (unanchored search, as Go's MatchString). The `u` flag
 * makes JavaScript refuse what RE2 refuses most often (lone escapes, bad classes); RE2-only syntax
 * (`(?i)` flags, `\z`, `[[:alpha:]]`) is refused at register rather than silently misread.
 */
export function compileRegexp(s: string): RegExp | null {
  try {
    return new RegExp(s, "u");
  } catch {
    return null;
  }
}

function setOf(s: string): Set<string> {
  return new Set(s.split(",").map((x) => x.trim()));
}

/** Nomad's checkOrder: as integers when both parse, else as floats, else lexically. */
function checkOrder(op: string, l: string, r: string): boolean {
  const INT = /^[+-]?[0-9]+$/;
  const FLOAT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$|^[+-]?(?:Inf|Infinity|NaN)$/i;
  let a: number | bigint | string = l;
  let b: number | bigint | string = r;
  if (INT.test(l) && INT.test(r)) {
    a = BigInt(l);
    b = BigInt(r);
  } else if (FLOAT.test(l) && FLOAT.test(r)) {
    a = Number(l);
    b = Number(r);
  }
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    default:
      return a >= b;
  }
}

function checkVersion(cache: ConstraintCache, lang: "version" | "semver", l: string, r: string): boolean {
  const v = parseVersion(l);
  const c = cache.version(r, lang);
  return v !== null && c !== null && c(v);
}

/** Nomad's checkConstraint over resolved values (also its affinity check). */
export function checkOperand(
  cache: ConstraintCache,
  operand: string,
  l: string,
  r: string,
  lFound: boolean,
  rFound: boolean,
): boolean {
  const both = lFound && rFound;
  switch (operand) {
    case DISTINCT_HOSTS:
    case DISTINCT_PROPERTY:
      return true;
    case "=":
    case "==":
    case "is":
      return both && l === r;
    case "!=":
    case "not":
      // Nomad compares the values only: a missing attribute is "" here.
      return l !== r;
    case "<":
    case "<=":
    case ">":
    case ">=":
      return both && checkOrder(operand, l, r);
    case "is_set":
      return lFound;
    case "is_not_set":
      return !lFound;
    case "version":
    case "semver":
      return both && checkVersion(cache, operand, l, r);
    case "regexp": {
      const re = both ? cache.regexp(r) : null;
      return re !== null && re.test(l);
    }
    case "set_contains":
    case "set_contains_all": {
      if (!both) return false;
      const have = setOf(l);
      return [...setOf(r)].every((x) => have.has(x));
    }
    case "set_contains_any": {
      if (!both) return false;
      const have = setOf(l);
      return [...setOf(r)].some((x) => have.has(x));
    }
    default:
      return false;
  }
}

/**
 * Whether the node satisfies the constraint. Constraints are validated before they get here.
 * `cache`: the plan's parsed right-hand sides (a fresh one when absent).
 */
export function constraintMet(c: Constraint, node: Node, cache = new ConstraintCache()): boolean {
  const [l, lFound] = resolveTarget(c.LTarget, node);
  const [r, rFound] = resolveTarget(c.RTarget, node);
  return checkOperand(cache, c.Operand, l, r, lFound, rFound);
}

/** Nomad's rendering, used as the placement failure reason: `${node.unique.name} = B`. */
export function formatConstraint(c: Constraint): string {
  return `${c.LTarget} ${c.Operand} ${c.RTarget}`;
}
