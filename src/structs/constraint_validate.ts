/** Nomad's JSON constraints (`Constraints: [{LTarget, RTarget, Operand}]`) → validated Constraints. */
import {
  CONSTRAINT_ATTRIBUTES,
  CONSTRAINT_OPERANDS,
  isConstraintAttribute,
  type Constraint,
} from "./constraint.js";
import { validationError } from "./errors.js";
import { asObject, oneOf, optArray, optString } from "./json_check.js";

export function constraints(field: string, input: unknown): Constraint[] {
  return optArray(field, input).map((c, i) => {
    const f = `${field}[${i}]`;
    const o = asObject(f, c);
    const LTarget = optString(`${f}.LTarget`, o.LTarget, "");
    if (!isConstraintAttribute(LTarget)) {
      throw validationError(
        `${f}.LTarget`,
        `unsupported attribute ${JSON.stringify(LTarget)} (supported: ${CONSTRAINT_ATTRIBUTES.join(", ")})`,
      );
    }
    const RTarget = optString(`${f}.RTarget`, o.RTarget, "");
    if (RTarget.includes("${") && !isConstraintAttribute(RTarget)) {
      throw validationError(`${f}.RTarget`, `unsupported attribute ${JSON.stringify(RTarget)}`);
    }
    return {
      LTarget,
      RTarget,
      Operand: oneOf(`${f}.Operand`, o.Operand, CONSTRAINT_OPERANDS, "constraint operator"),
    };
  });
}
