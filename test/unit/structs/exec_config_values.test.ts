/**
 * Issue 30: values of an exec task's config as Nomad's driver spec takes them. `command = 5` runs
 * "5" (cty converts a number or bool to string), a list is refused, and a NUL, which no process can
 * be given, is refused at validation with the field named (in `command`, `args` and `env`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { validateJob } from "../../../src/structs/job_validate.js";
import { BerthError } from "../../../src/structs/errors.js";

const job = (task: Record<string, unknown>) => ({
  ID: "cfg",
  TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", ...task }] }],
});
const config = (c: Record<string, unknown>) =>
  validateJob(job({ Config: c })).TaskGroups[0]!.Tasks[0]!.Config;

function refused(input: unknown, field: string, message: RegExp): void {
  assert.throws(
    () => validateJob(input),
    (err: unknown) => {
      assert.ok(err instanceof BerthError);
      assert.equal(err.code, "ERR_VALIDATION");
      assert.equal(err.field, field);
      assert.match(err.message, message);
      return true;
    },
  );
}

test("numbers and bools in command and args become their text, as Nomad's exec spec converts them", () => {
  assert.deepEqual(config({ command: 5, args: [1.5, true, "x", 10_000_000_000_000_000_000_000] }), {
    command: "5",
    args: ["1.5", "true", "x", "10000000000000000000000"],
  });
  assert.deepEqual(config({ command: false }), { command: "false" });
});

test("a list or object where a string goes is refused, naming the field", () => {
  refused(
    job({ Config: { command: ["a"] } }),
    "Job.TaskGroups[0].Tasks[0].Config.command",
    /must be a string/,
  );
  refused(job({ Config: { args: ["a", { b: 1 }] } }), "Job.TaskGroups[0].Tasks[0].Config.args[1]", /string/);
});

test("a NUL in command, args or env is refused, naming the field", () => {
  const nul = /must not contain a NUL character/;
  refused(job({ Config: { command: "/bin/a\0b" } }), "Job.TaskGroups[0].Tasks[0].Config.command", nul);
  refused(job({ Config: { args: ["ok", "x\0"] } }), "Job.TaskGroups[0].Tasks[0].Config.args[1]", nul);
  refused(job({ Env: { A: "1\0" } }), "Job.TaskGroups[0].Tasks[0].Env.A", nul);
});
