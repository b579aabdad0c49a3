/**
 * Nomad's placement constraints, the subset berth honours: an attribute of the node compared for
 * equality with a value. `LTarget` is a node attribute (`${node.unique.name}`, `${node.unique.id}`,
 * `${node.datacenter}`, `${node.class}`); `RTarget` is a literal or another attribute; `Operand` is
 * `=`, `==` or `!=`. Job, group and task constraints all apply to every alloc of the group. Pure.
 */
import type { Node } from "./node.js";

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

export const CONSTRAINT_ATTRIBUTES: readonly string[] = Object.keys(ATTRIBUTES);

export function isConstraintAttribute(s: string): boolean {
  return Object.hasOwn(ATTRIBUTES, s);
}

/** An attribute's value on the node; anything else is a literal. */
function resolve(target: string, node: Node): string {
  return Object.hasOwn(ATTRIBUTES, target) ? ATTRIBUTES[target]!(node) : target;
}

/** Whether the node satisfies the constraint. Constraints are validated before they get here. */
export function constraintMet(c: Constraint, node: Node): boolean {
  const equal = resolve(c.LTarget, node) === resolve(c.RTarget, node);
  return c.Operand === "!=" ? !equal : equal;
}

/** Nomad's rendering, used as the placement failure reason: `${node.unique.name} = B`. */
export function formatConstraint(c: Constraint): string {
  return `${c.LTarget} ${c.Operand} ${c.RTarget}`;
}
