/**
 * Issue 30: a bare identifier written as a value (`command = some_var`, a forgotten pair of quotes)
 * is refused with the file, the line and the name, in HCL2's words ("Unknown variable; There is no
 * variable named ..."), instead of being stored as the literal "${some_var}". What Nomad passes
 * through for the client to interpolate still passes: `"${some_var}"` written as a template,
 * runtime roots (`node.unique.name`, `attr.x`, `meta.x`, `env["X"]`) and bare `NOMAD_*` names.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJobSpec, SpecError } from "../../../src/api/index.js";
import type { Job } from "../../../src/api/types.js";

const spec = (cfg: string, extra = "") =>
  `job "a" {\n${extra}  group "g" {\n    task "t" {\n      driver = "exec"\n      config {\n        ${cfg}\n      }\n    }\n  }\n}\n`;
const config = (job: Job) => job.TaskGroups[0]!.Tasks[0]!.Config;

async function refused(text: string, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(parseJobSpec("job.nomad.hcl", text), (err: unknown) => {
    assert.ok(err instanceof SpecError, String(err));
    for (const re of patterns) assert.match(err.message, re);
    return true;
  });
}

test("a bare identifier as a value is an Unknown variable error naming file, line and name", async () => {
  await refused(
    spec("command = some_var"),
    /^job\.nomad\.hcl:6: /,
    /Unknown variable; There is no variable named "some_var"\./,
  );
  await refused(spec(`args = ["-x", other_var]`), /job\.nomad\.hcl:6: /, /named "other_var"/);
  await refused(spec(`command = "/bin/true"`, "  meta {\n    k = foo\n  }\n"), /:3: /, /named "foo"/);
});

test("what Nomad's client interpolates still passes through as ${...}", async () => {
  const job = await parseJobSpec(
    "job.nomad.hcl",
    spec(
      `command = "\${some_var}"\n        args = [NOMAD_TASK_DIR, node.unique.name, attr.kernel.name, meta.rack, env["HOME"]]`,
    ),
  );
  assert.deepEqual(config(job), {
    command: "${some_var}",
    args: [
      "${NOMAD_TASK_DIR}",
      "${node.unique.name}",
      "${attr.kernel.name}",
      "${meta.rack}",
      '${env["HOME"]}',
    ],
  });
});
