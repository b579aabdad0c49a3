import { test } from "node:test";
import assert from "node:assert/strict";
import {
  applyDrainRequest,
  applyEligibility,
  completeDrain,
  drainForceAtMs,
  isDraining,
  ZERO_TIME,
} from "../../../src/structs/node.js";
import { validateDrainRequest, validateEligibilityRequest } from "../../../src/structs/node_validate.js";
import { BerthError } from "../../../src/structs/errors.js";
import { makeNode } from "../../builders/node.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const spec = (Deadline: number, IgnoreSystemJobs = false) => ({
  DrainSpec: { Deadline, IgnoreSystemJobs },
  MarkEligible: false,
  Meta: { message: "kernel upgrade" },
});

test("drain request: a spec makes the node ineligible and sets the deadline from now", () => {
  const n = applyDrainRequest(makeNode("n1"), spec(3600e9), NOW);
  assert.equal(n.SchedulingEligibility, "ineligible");
  assert.deepEqual(n.DrainStrategy, {
    Deadline: 3600e9,
    IgnoreSystemJobs: false,
    ForceDeadline: "2026-01-01T13:00:00.000Z",
    StartedAt: "2026-01-01T12:00:00.000Z",
  });
  assert.equal(drainForceAtMs(n.DrainStrategy), NOW + 3600_000);
  assert.deepEqual(n.LastDrain, {
    StartedAt: "2026-01-01T12:00:00.000Z",
    UpdatedAt: "2026-01-01T12:00:00.000Z",
    Status: "draining",
    Meta: { message: "kernel upgrade" },
  });

  const updated = applyDrainRequest(n, spec(-1, true), NOW + 5000);
  assert.equal(updated.DrainStrategy!.StartedAt, "2026-01-01T12:00:00.000Z", "an update keeps StartedAt");
  assert.equal(updated.DrainStrategy!.ForceDeadline, ZERO_TIME);
  assert.equal(drainForceAtMs(updated.DrainStrategy!), Number.NEGATIVE_INFINITY, "-1 forces now");
  const none = applyDrainRequest(makeNode("n2"), spec(0), NOW);
  assert.equal(drainForceAtMs(none.DrainStrategy!), null, "0: no deadline");
});

test("drain request: null cancels; MarkEligible makes the node eligible again", () => {
  const draining = applyDrainRequest(makeNode("n1"), spec(0), NOW);
  const kept = applyDrainRequest(draining, { DrainSpec: null, MarkEligible: false, Meta: {} }, NOW + 1000);
  assert.equal(isDraining(kept), false);
  assert.equal(kept.SchedulingEligibility, "ineligible");
  assert.equal(kept.LastDrain?.Status, "canceled");
  assert.deepEqual(kept.LastDrain?.Meta, { message: "kernel upgrade" });
  const eligible = applyDrainRequest(draining, { DrainSpec: null, MarkEligible: true, Meta: {} }, NOW);
  assert.equal(eligible.SchedulingEligibility, "eligible");
  const never = applyDrainRequest(makeNode("n3"), { DrainSpec: null, MarkEligible: false, Meta: {} }, NOW);
  assert.equal(never.LastDrain ?? null, null, "cancelling no drain records none");
});

test("drain completion clears the strategy, keeps the node ineligible and records LastDrain", () => {
  const draining = applyDrainRequest(makeNode("n1"), spec(0), NOW);
  const done = completeDrain(draining, NOW + 60_000);
  assert.equal(done.DrainStrategy, null);
  assert.equal(done.SchedulingEligibility, "ineligible");
  assert.deepEqual(done.LastDrain, {
    StartedAt: "2026-01-01T12:00:00.000Z",
    UpdatedAt: "2026-01-01T12:01:00.000Z",
    Status: "complete",
    Meta: { message: "kernel upgrade" },
  });
});

test("eligibility: a draining node cannot be made eligible", () => {
  const draining = applyDrainRequest(makeNode("n1"), spec(0), NOW);
  assert.throws(
    () => applyEligibility(draining, "eligible"),
    (e: unknown) => e instanceof BerthError && e.field === "Eligibility",
  );
  assert.equal(applyEligibility(makeNode("n2"), "ineligible").SchedulingEligibility, "ineligible");
});

test("drain and eligibility bodies: validated field by field", () => {
  assert.deepEqual(validateDrainRequest({ DrainSpec: { Deadline: 5e9, IgnoreSystemJobs: true } }), {
    DrainSpec: { Deadline: 5e9, IgnoreSystemJobs: true },
    MarkEligible: false,
    Meta: {},
  });
  assert.deepEqual(validateDrainRequest({ DrainSpec: null, MarkEligible: true }), {
    DrainSpec: null,
    MarkEligible: true,
    Meta: {},
  });
  const field = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return e instanceof BerthError ? e.field : String(e);
    }
    return "accepted";
  };
  assert.equal(
    field(() => validateDrainRequest({ DrainSpec: { Deadline: "1h" } })),
    "DrainSpec.Deadline",
  );
  assert.equal(
    field(() => validateDrainRequest({ DrainSpec: { Deadline: 1.5 } })),
    "DrainSpec.Deadline",
  );
  assert.equal(
    field(() => validateDrainRequest({ DrainSpec: "yes" })),
    "DrainSpec",
  );
  assert.equal(
    field(() => validateDrainRequest({ DrainSpec: { IgnoreSystemJobs: "no" } })),
    "DrainSpec.IgnoreSystemJobs",
  );
  assert.equal(
    field(() => validateDrainRequest({ MarkEligible: 1 })),
    "MarkEligible",
  );
  assert.equal(
    field(() => validateDrainRequest({ Meta: { a: 1 } })),
    "Meta.a",
  );
  assert.equal(
    field(() => validateDrainRequest([])),
    "body",
  );
  assert.equal(validateEligibilityRequest({ Eligibility: "ineligible" }), "ineligible");
  assert.equal(
    field(() => validateEligibilityRequest({})),
    "Eligibility",
  );
  assert.equal(
    field(() => validateEligibilityRequest({ Eligibility: "maybe" })),
    "Eligibility",
  );
});
