/**
 * The node drain and eligibility request bodies (Nomad's NodeUpdateDrainRequest and
 * NodeUpdateEligibilityRequest) → typed values. Pure; every refusal names its field.
 */
import { validationError } from "./errors.js";
import { asObject, oneOf, optBool, optObject, optStringMap } from "./json_check.js";
import { ELIGIBILITIES, type DrainSpec, type SchedulingEligibility } from "./node.js";

export interface DrainRequest {
  /** null cancels the drain. */
  DrainSpec: DrainSpec | null;
  /** With a null DrainSpec: make the node eligible again. */
  MarkEligible: boolean;
  Meta: Record<string, string>;
}

export function validateDrainRequest(input: unknown): DrainRequest {
  const body = asObject("body", input);
  const spec = optObject("DrainSpec", body.DrainSpec);
  const MarkEligible = optBool("MarkEligible", body.MarkEligible, false);
  const Meta = optStringMap("Meta", body.Meta);
  if (!spec) return { DrainSpec: null, MarkEligible, Meta };
  const deadline = spec.Deadline ?? 0;
  // Nomad's Deadline is a Go time.Duration (int64 nanoseconds, about ±292 years); past that the
  // force deadline is no date at all (a 1e300 deadline answered 500 "Invalid time value").
  if (typeof deadline !== "number" || !Number.isInteger(deadline) || Math.abs(deadline) >= 2 ** 63) {
    throw validationError(
      "DrainSpec.Deadline",
      "must be an integer number of nanoseconds below 2^63, about 292 years (0: no deadline, -1: force now)",
    );
  }
  return {
    DrainSpec: {
      Deadline: deadline,
      IgnoreSystemJobs: optBool("DrainSpec.IgnoreSystemJobs", spec.IgnoreSystemJobs, false),
    },
    MarkEligible,
    Meta,
  };
}

export function validateEligibilityRequest(input: unknown): SchedulingEligibility {
  const body = asObject("body", input);
  return oneOf("Eligibility", body.Eligibility, ELIGIBILITIES, "scheduling eligibility");
}
