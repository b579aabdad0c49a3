import { test } from "node:test";
import assert from "node:assert/strict";
import { constraintMet, formatConstraint } from "../../../src/structs/constraint.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { BerthError } from "../../../src/structs/errors.js";
import { makeNode } from "../../builders/node.js";

const node = makeNode("id-b", { Name: "B", Datacenter: "dc2", NodeClass: "gpu" });

test("constraint: each node attribute resolves; = and == match equal values, != the others", () => {
  const c = (LTarget: string, Operand: string, RTarget: string) =>
    constraintMet({ LTarget, Operand, RTarget }, node);
  assert.equal(c("${node.unique.name}", "=", "B"), true);
  assert.equal(c("${node.unique.name}", "==", "B"), true);
  assert.equal(c("${node.unique.name}", "=", "A"), false);
  assert.equal(c("${node.unique.name}", "!=", "A"), true);
  assert.equal(c("${node.unique.name}", "!=", "B"), false);
  assert.equal(c("${node.unique.id}", "=", "id-b"), true);
  assert.equal(c("${node.datacenter}", "=", "dc2"), true);
  assert.equal(c("${node.class}", "=", "gpu"), true);
  assert.equal(c("${node.class}", "=", "${node.class}"), true, "an attribute on the right resolves too");
  assert.equal(
    formatConstraint({ LTarget: "${node.unique.name}", Operand: "=", RTarget: "B" }),
    "${node.unique.name} = B",
  );
});

const jobWith = (c: unknown) => ({
  ID: "j",
  Constraints: c,
  TaskGroups: [{ Name: "g", Constraints: c, Tasks: [{ Name: "t", Driver: "exec", Constraints: c }] }],
});
const jobOnly = (c: unknown) => ({
  ID: "j",
  Constraints: c,
  TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
});
const field = (f: string) => (e: BerthError) => e.code === "ERR_VALIDATION" && e.message.includes(f);

test("constraint: validated at job, group and task level; absent means none", () => {
  const ok = [{ LTarget: "${node.unique.name}", RTarget: "B", Operand: "=" }];
  const j = validateJob(jobWith(ok));
  assert.deepEqual(j.Constraints, ok);
  assert.deepEqual(j.TaskGroups[0]!.Constraints, ok);
  assert.deepEqual(j.TaskGroups[0]!.Tasks[0]!.Constraints, ok);
  const none = validateJob(jobWith(undefined));
  assert.deepEqual(none.Constraints, []);
  assert.deepEqual(none.TaskGroups[0]!.Tasks[0]!.Constraints, []);
});

test("constraint: unknown attributes, operators and shapes are refused by field", () => {
  assert.throws(
    () => validateJob(jobOnly([{ LTarget: "${node.region.x}", RTarget: "linux", Operand: "=" }])),
    field("Job.Constraints[0].LTarget"),
  );
  assert.throws(
    () => validateJob(jobOnly([{ LTarget: "${node.unique.name}", RTarget: "B", Operand: "~=" }])),
    field("Job.Constraints[0].Operand"),
  );
  assert.throws(
    () => validateJob(jobOnly([{ LTarget: "${node.unique.name}", RTarget: "${env.rack}", Operand: "=" }])),
    field("Job.Constraints[0].RTarget"),
  );
  assert.throws(
    () => validateJob(jobOnly([{ LTarget: "${node.unique.name}", RTarget: "B" }])),
    field("Operand"),
  );
  assert.throws(() => validateJob(jobOnly("B")), field("Job.Constraints"));
  assert.throws(
    () => validateJob(jobWith([{ LTarget: "${node.name}", RTarget: "B", Operand: "=" }])),
    field("Job.TaskGroups[0].Tasks[0].Constraints[0].LTarget"),
  );
});

test("constraint: ${attr.*} and ${meta.*} resolve from the node; a missing one meets only != (and is_not_set)", () => {
  const n = makeNode("n", { Attributes: { "kernel.name": "linux" }, Meta: { rack: "r1" } });
  const c = (LTarget: string, Operand: string, RTarget: string) =>
    constraintMet({ LTarget, Operand, RTarget }, n);
  assert.equal(c("${attr.kernel.name}", "=", "linux"), true);
  assert.equal(c("${attr.kernel.name}", "!=", "linux"), false);
  assert.equal(c("${meta.rack}", "=", "r1"), true);
  assert.equal(c("${meta.rack}", "!=", "r2"), true);
  assert.equal(c("${meta.zone}", "=", "z"), false);
  // Nomad's checkConstraint: `!=` compares values only, and a missing attribute is "".
  assert.equal(c("${meta.zone}", "!=", "z"), true, "Nomad: a missing attribute differs from any value");
  assert.equal(c("${meta.zone}", "!=", "${meta.other}"), false, "both missing: equal, so not !=");
  assert.equal(c("${attr.kernel.name}", "=", "${meta.rack}"), false);
  assert.equal(
    constraintMet({ LTarget: "${meta.rack}", Operand: "=", RTarget: "r1" }, makeNode("old")),
    false,
  );
  const ok = [{ LTarget: "${attr.kernel.name}", RTarget: "${meta.os}", Operand: "=" }];
  assert.deepEqual(validateJob(jobOnly(ok)).Constraints, ok);
});
