/**
 * Nomad's JSON constraints (`Constraints: [{LTarget, RTarget, Operand}]`) → validated Constraints,
 * with the rules of Nomad's Constraint.Validate: an RTarget where the operand needs one (and none
 * for is_set / is_not_set), a regexp / version / semver that parses, a distinct_property limit
 * that is a count ≥ 1, and distinct_hosts / distinct_property only at job and group level. Each
 * refusal names the field and the problem.
 */
import {
  CONSTRAINT_ATTRIBUTES,
  CONSTRAINT_OPERANDS,
  DISTINCT_HOSTS,
  DISTINCT_PROPERTY,
  compileRegexp,
  isConstraintAttribute,
  type Constraint,
} from "./constraint.js";
import { validationError } from "./errors.js";
import { asObject, oneOf, optArray, optString } from "./json_check.js";
import { parseVersionConstraint } from "./version_constraint.js";

/** Where the constraints are written: distinct_* are refused on a task, as Nomad's Task.Validate. */
export type ConstraintLevel = "job" | "group" | "task";

const NEEDS_RTARGET = new Set(["=", "==", "is", "!=", "not", "<", "<=", ">", ">="]);
const SET_OPERANDS = new Set(["set_contains", "set_contains_all", "set_contains_any"]);

/** A target is a literal or an attribute berth can resolve (Nomad's validateConstraintAttribute). */
function checkTarget(field: string, target: string): void {
  if (!target.startsWith("$")) return;
  if (!isConstraintAttribute(target)) {
    throw validationError(
      field,
      `unsupported attribute ${JSON.stringify(target)} (supported: ${CONSTRAINT_ATTRIBUTES.join(", ")})`,
    );
  }
}

/**
 * The checks on an operand and its right-hand side that constraints and affinities share (Nomad's
 * Constraint.Validate and Affinity.Validate word them alike). `f` is the entry's field path.
 */
export function checkOperandTarget(f: string, operand: string, rtarget: string): void {
  if (NEEDS_RTARGET.has(operand) && rtarget === "")
    throw validationError(`${f}.RTarget`, `operator ${JSON.stringify(operand)} requires an RTarget`);
  if (SET_OPERANDS.has(operand) && rtarget === "")
    throw validationError(`${f}.RTarget`, "set contains operators require an RTarget");
  if (operand === "regexp" && compileRegexp(rtarget) === null)
    throw validationError(`${f}.RTarget`, `regular expression ${JSON.stringify(rtarget)} failed to compile`);
  if (operand === "version" || operand === "semver") {
    try {
      parseVersionConstraint(rtarget, operand);
    } catch (err) {
      throw validationError(`${f}.RTarget`, `${operand} constraint is invalid: ${(err as Error).message}`);
    }
  }
}

export function constraints(field: string, input: unknown, level: ConstraintLevel = "group"): Constraint[] {
  return optArray(field, input).map((c, i) => {
    const f = `${field}[${i}]`;
    const o = asObject(f, c);
    const Operand = oneOf(`${f}.Operand`, o.Operand, CONSTRAINT_OPERANDS, "constraint operator");
    const LTarget = optString(`${f}.LTarget`, o.LTarget, "");
    const RTarget = optString(`${f}.RTarget`, o.RTarget, "");
    if (level === "task" && (Operand === DISTINCT_HOSTS || Operand === DISTINCT_PROPERTY))
      throw validationError(`${f}.Operand`, `${Operand} is not allowed at task level`);
    if (Operand !== DISTINCT_HOSTS && LTarget === "")
      throw validationError(`${f}.LTarget`, "no attribute provided but is required by operator");
    checkTarget(`${f}.LTarget`, LTarget);
    checkTarget(`${f}.RTarget`, RTarget);
    checkOperandTarget(f, Operand, RTarget);
    if (Operand === "is_set" || Operand === "is_not_set") {
      if (RTarget !== "")
        throw validationError(
          `${f}.RTarget`,
          `operator ${JSON.stringify(Operand)} does not support an RTarget`,
        );
    }
    if (Operand === DISTINCT_PROPERTY && RTarget !== "" && !/^[0-9]+$/.test(RTarget))
      throw validationError(
        `${f}.RTarget`,
        `distinct_property limit ${JSON.stringify(RTarget)} is not a count`,
      );
    if (Operand === DISTINCT_PROPERTY && RTarget !== "" && Number(RTarget) < 1)
      throw validationError(`${f}.RTarget`, "distinct_property must have an allowed count of 1 or greater");
    return { LTarget, RTarget, Operand };
  });
}
