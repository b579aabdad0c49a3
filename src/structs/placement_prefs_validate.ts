/**
 * `Affinities` and `Spreads` (job, group and task level) in Nomad's JSON, canonicalised (weight 50
 * when absent, as Nomad's `Affinity.Canonicalize`/`Spread.Canonicalize`) and checked as Nomad's
 * `Affinity.Validate` and `Spread.Validate` do, with their texts. An affinity takes the constraint
 * operators (constraint.ts CONSTRAINT_OPERANDS) except those that are not comparisons of one node's
 * attribute (distinct_hosts, distinct_property, is_set, is_not_set). Pure.
 */
import { CONSTRAINT_OPERANDS } from "./constraint.js";
import { validationError } from "./errors.js";
import { AFFINITY_FIELDS, checkFields, SPREAD_FIELDS, SPREAD_TARGET_FIELDS } from "./job_fields.js";
import type { Affinity, Spread, SpreadTarget } from "./job_stanzas.js";
import { asObject, optArray, optNumber, optString } from "./json_check.js";

const NOT_AFFINITY = new Set(["distinct_hosts", "distinct_property", "is_set", "is_not_set"]);
const NEEDS_RTARGET = new Set(["=", "==", "is", "!=", "not", "<", "<=", ">", ">="]);
const SET_CONTAINS = new Set(["set_contains", "set_contains_all", "set_contains_any"]);

export function affinities(field: string, input: unknown): Affinity[] {
  return optArray(field, input).map((a, i) => affinity(`${field}[${i}]`, a));
}

function affinity(field: string, input: unknown): Affinity {
  const a = asObject(field, input);
  checkFields(field, a, AFFINITY_FIELDS);
  const LTarget = optString(`${field}.LTarget`, a.LTarget, "");
  const RTarget = optString(`${field}.RTarget`, a.RTarget, "");
  const Operand = optString(`${field}.Operand`, a.Operand, "");
  const Weight = optNumber(`${field}.Weight`, a.Weight, 50, { integer: true });
  if (Operand === "") throw validationError(`${field}.Operand`, "Missing affinity operand");
  const known = (CONSTRAINT_OPERANDS as readonly string[]).includes(Operand) && !NOT_AFFINITY.has(Operand);
  if (!known)
    throw validationError(`${field}.Operand`, `Unknown affinity operator ${JSON.stringify(Operand)}`);
  if (SET_CONTAINS.has(Operand) && RTarget === "") {
    throw validationError(`${field}.RTarget`, "Set contains operators require an RTarget");
  }
  if (NEEDS_RTARGET.has(Operand) && RTarget === "") {
    throw validationError(`${field}.RTarget`, `Operator ${JSON.stringify(Operand)} requires an RTarget`);
  }
  if (Operand === "regexp") {
    try {
      new RegExp(RTarget);
    } catch (err) {
      throw validationError(
        `${field}.RTarget`,
        `Regular expression failed to compile: ${(err as Error).message}`,
      );
    }
  }
  if (LTarget === "") throw validationError(`${field}.LTarget`, "No LTarget provided but is required");
  if (Weight === 0) throw validationError(`${field}.Weight`, "Affinity weight cannot be zero");
  if (Weight > 100 || Weight < -100) {
    throw validationError(`${field}.Weight`, "Affinity weight must be within the range [-100,100]");
  }
  return { LTarget, RTarget, Operand, Weight };
}

export function spreads(field: string, input: unknown): Spread[] {
  return optArray(field, input).map((s, i) => spread(`${field}[${i}]`, s));
}

function spread(field: string, input: unknown): Spread {
  const s = asObject(field, input);
  checkFields(field, s, SPREAD_FIELDS);
  const Attribute = optString(`${field}.Attribute`, s.Attribute, "");
  const Weight = optNumber(`${field}.Weight`, s.Weight, 50, { integer: true });
  if (Attribute === "") throw validationError(`${field}.Attribute`, "Missing spread attribute");
  if (Weight <= 0 || Weight > 100) {
    throw validationError(`${field}.Weight`, "Spread block must have a positive weight from 0 to 100");
  }
  const seen = new Set<string>();
  let sum = 0;
  const SpreadTarget = optArray(`${field}.SpreadTarget`, s.SpreadTarget).map((t, i): SpreadTarget => {
    const f = `${field}.SpreadTarget[${i}]`;
    const o = asObject(f, t);
    checkFields(f, o, SPREAD_TARGET_FIELDS);
    const Value = optString(`${f}.Value`, o.Value, "");
    const Percent = optNumber(`${f}.Percent`, o.Percent, 0, { integer: true, min: 0 });
    if (seen.has(Value))
      throw validationError(f, `Spread target value ${JSON.stringify(Value)} already defined`);
    seen.add(Value);
    if (Percent > 100) {
      throw validationError(
        `${f}.Percent`,
        `Spread target percentage for value ${JSON.stringify(Value)} must be between 0 and 100`,
      );
    }
    sum += Percent;
    return { Value, Percent };
  });
  if (sum > 100) {
    throw validationError(
      `${field}.SpreadTarget`,
      `Sum of spread target percentages must not be greater than 100%; got ${sum}%`,
    );
  }
  return { Attribute, Weight, SpreadTarget };
}
