/**
 * Nomad's placement constraints, the subset berth honours: an attribute of the node compared for
 * equality with a value. `LTarget` is a node attribute (`${node.unique.name}`, `${node.unique.id}`,
 * `${node.datacenter}`, `${node.class}`, `${attr.NAME}` from the node's Attributes, `${meta.NAME}`
 * from its Meta); `RTarget` is a literal or another attribute; `Operand` is `=`, `==` or `!=`. As
 * in Nomad, a constraint on an attribute the node does not have is not met, whatever the operand.
 * Job, group and task constraints all apply to every alloc of the group. Pure.
 */
import { ownEntry, type Node } from "./node.js";

export interface Constraint {
  LTarget: string;
  RTarget: string;
  Operand: string;
}

export const CONSTRAINT_OPERANDS = ["=", "==", "!="] as const;

const ATTRIBUTES: Record<string, (n: Node) => string> = {
  "${node.unique.name}": (n) => n.Name,
  "${node.unique.id}": (n) => n.ID,
  "${node.datacenter}": (n) => n.Datacenter,
  "${node.class}": (n) => n.NodeClass,
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

/** An attribute's value on the node (undefined when the node lacks it); anything else is a literal. */
function resolve(target: string, node: Node): string | undefined {
  if (Object.hasOwn(ATTRIBUTES, target)) return ATTRIBUTES[target]!(node);
  const m = MAP_ATTRIBUTE.exec(target);
  if (!m) return target;
  const map = m[1] === "attr" ? node.Attributes : node.Meta;
  return ownEntry(map, m[2]!);
}

/** Whether the node satisfies the constraint. Constraints are validated before they get here. */
export function constraintMet(c: Constraint, node: Node): boolean {
  const l = resolve(c.LTarget, node);
  const r = resolve(c.RTarget, node);
  if (l === undefined || r === undefined) return false;
  return c.Operand === "!=" ? l !== r : l === r;
}

/** Nomad's rendering, used as the placement failure reason: `${node.unique.name} = B`. */
export function formatConstraint(c: Constraint): string {
  return `${c.LTarget} ${c.Operand} ${c.RTarget}`;
}
