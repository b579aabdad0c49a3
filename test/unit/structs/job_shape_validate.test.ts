/**
 * Job shapes Nomad's Job.Validate and TaskGroup.Validate refuse, with Nomad's texts and the field
 * named (issue 30): a group without tasks, two tasks (or groups) of one name, a job without groups.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { validateJob } from "../../../src/structs/job_validate.js";
import { BerthError } from "../../../src/structs/errors.js";

const task = (Name: string) => ({ Name, Driver: "exec", Config: { command: "/bin/true" } });
const job = (groups: unknown[]) => ({ ID: "shape", TaskGroups: groups });

function refused(input: unknown, field: string, message: string): void {
  assert.throws(
    () => validateJob(input),
    (err: unknown) => {
      assert.ok(err instanceof BerthError);
      assert.equal(err.code, "ERR_VALIDATION");
      assert.equal(err.field, field);
      assert.equal(err.message, `${field}: ${message}`);
      return true;
    },
  );
}

test("a group with no tasks is refused as Nomad refuses it", () => {
  refused(job([{ Name: "g", Tasks: [] }]), "Job.TaskGroups[0].Tasks", "Missing tasks for task group");
  refused(job([{ Name: "g" }]), "Job.TaskGroups[0].Tasks", "Missing tasks for task group");
  refused(job([{ Name: "g", Tasks: null }]), "Job.TaskGroups[0].Tasks", "Missing tasks for task group");
  refused(
    job([
      { Name: "a", Tasks: [task("t")] },
      { Name: "b", Tasks: [] },
    ]),
    "Job.TaskGroups[1].Tasks",
    "Missing tasks for task group",
  );
});

test("two tasks of one name in a group are refused with Nomad's text (1-based, as Nomad counts)", () => {
  refused(
    job([{ Name: "g", Tasks: [task("x"), task("y"), task("x")] }]),
    "Job.TaskGroups[0].Tasks[2].Name",
    "Task 3 redefines 'x' from task 1",
  );
  // The same task name in two groups is fine (Nomad checks per group).
  const ok = validateJob(
    job([
      { Name: "a", Tasks: [task("x")] },
      { Name: "b", Tasks: [task("x")] },
    ]),
  );
  assert.equal(ok.TaskGroups.length, 2);
});

test("two groups of one name and a job without groups are refused with Nomad's texts", () => {
  refused(
    job([
      { Name: "g", Tasks: [task("t")] },
      { Name: "g", Tasks: [task("t")] },
    ]),
    "Job.TaskGroups[1].Name",
    "Job task group 2 redefines 'g' from group 1",
  );
  refused(job([]), "Job.TaskGroups", "Missing job task groups");
  refused({ ID: "shape" }, "Job.TaskGroups", "Missing job task groups");
});
