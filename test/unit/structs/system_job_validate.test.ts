/** Nomad's rules for system and sysbatch jobspecs (Job.Validate, TaskGroup.Validate, Canonicalize). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { validateJob } from "../../../src/structs/job_validate.js";

const job = (type: string, group: Record<string, unknown> = {}, over: Record<string, unknown> = {}) =>
  validateJob({
    ID: "j",
    Type: type,
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }], ...group }],
    ...over,
  });

test("system: a group's count is 0 or 1, in Nomad's words; sysbatch takes any count", () => {
  assert.equal(job("system").TaskGroups[0]!.Count, 1);
  assert.equal(job("system", { Count: 0 }).TaskGroups[0]!.Count, 0);
  assert.throws(
    () => job("system", { Count: 2 }),
    /Job\.TaskGroups\[0\]\.Count: Job task group g has count 2\. Count cannot exceed 1 with system scheduler/,
  );
  assert.equal(job("sysbatch", { Count: 3 }).TaskGroups[0]!.Count, 3);
});

test("system: no affinity or spread block, at job or group level", () => {
  const affinity = [{ LTarget: "${node.class}", RTarget: "x", Operand: "=", Weight: 50 }];
  const spread = [{ Attribute: "${node.datacenter}", Weight: 50 }];
  assert.throws(
    () => job("system", {}, { Affinities: affinity }),
    /System jobs may not have an affinity block/,
  );
  assert.throws(() => job("system", { Affinities: affinity }), /System jobs may not have an affinity block/);
  assert.throws(() => job("system", {}, { Spreads: spread }), /System jobs may not have a spread block/);
  assert.throws(() => job("system", { Spreads: spread }), /System jobs may not have a spread block/);
  assert.equal(job("sysbatch", { Affinities: affinity }).TaskGroups[0]!.Affinities?.length, 1);
});

test("sysbatch: batch's restart default, no reschedule policy, no default update strategy", () => {
  const j = job("sysbatch");
  assert.equal(j.Type, "sysbatch");
  assert.deepEqual(j.TaskGroups[0]!.RestartPolicy, {
    Attempts: 3,
    Interval: 24 * 3600e9,
    Delay: 15e9,
    Mode: "fail",
  });
  assert.equal(j.TaskGroups[0]!.ReschedulePolicy, null);
  assert.equal(j.Update, null);
  assert.throws(
    () => job("sysbatch", { ReschedulePolicy: { Attempts: 1 } }),
    /System or sysbatch jobs should not have a reschedule policy/,
  );
});
