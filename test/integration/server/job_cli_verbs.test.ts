/**
 * `job validate`, `job inspect`, `job init`, `job plan` and `job history` as a Nomad operator uses
 * them, against the real HTTP API of an in-process server: validation registers nothing; inspect
 * prints `{"Job": ...}` that `job run` accepts again; init writes an example once and never
 * overwrites it; plan shows the diff and changes nothing; history lists the kept versions.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { ApiClient, parseJobSpec } from "../../../src/api/index.js";
import { jobInit } from "../../../src/cli/commands/job_init.js";
import { jobHistory } from "../../../src/cli/commands/job_history.js";
import { jobInspect } from "../../../src/cli/commands/job_inspect.js";
import { jobPlan } from "../../../src/cli/commands/job_plan.js";
import { jobRun } from "../../../src/cli/commands/job_run.js";
import { jobValidate } from "../../../src/cli/commands/job_validate.js";
import { processIO, type CommandIO } from "../../../src/cli/io.js";
import { startServer } from "./fake_agent.js";

const GOOD = `job "checked" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n`;
// Valid HCL, refused by the server: the mount names a volume the group does not declare.
const BAD = GOOD.replace(
  'config { command = "/bin/true" }',
  'config { command = "/bin/true" }\n      volume_mount {\n        volume = "nope"\n        destination = "/data"\n      }',
);

function io(base: string, files: Record<string, string>, dir = tmpdir()) {
  const out: string[] = [];
  const err: string[] = [];
  const real = processIO(new ApiClient({ address: base }));
  const captured: CommandIO = {
    ...real,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    readFile: async (p) => files[p] ?? Promise.reject(new Error(`ENOENT: ${p}`)),
    writeNewFile: (p, text) => real.writeNewFile!(path.join(dir, p), text),
  };
  return { io: captured, out, err };
}

test("job validate: server validation, nothing registered; errors exit 1", async (t) => {
  const base = await startServer(t);
  const ok = io(base, { "good.hcl": GOOD, "bad.hcl": BAD });
  assert.equal(await jobValidate.run(jobValidate.parse(["good.hcl"]), ok.io), 0, ok.err.join("\n"));
  assert.deepEqual(ok.out, ["Job validation successful"]);
  const bad = io(base, { "bad.hcl": BAD });
  assert.equal(await jobValidate.run(jobValidate.parse(["bad.hcl"]), bad.io), 1);
  assert.equal(bad.err[0], "Job validation errors:");
  assert.match(bad.err[1]!, /VolumeMounts\[0\]\.Volume/);
  const jobs = (await (await fetch(`${base}/v1/jobs`)).json()) as unknown[];
  assert.deepEqual(jobs, []);
  // The route itself: an invalid job is an answer, not a failed request.
  const res = await fetch(`${base}/v1/validate/job`, {
    method: "POST",
    body: JSON.stringify({ Job: await parseJobSpec("bad.hcl", BAD) }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { ValidationErrors: string[]; DriverConfigValidated: boolean };
  assert.equal(body.DriverConfigValidated, false);
  assert.equal(body.ValidationErrors.length, 1);
  const notJob = await fetch(`${base}/v1/validate/job`, { method: "PUT", body: "[]" });
  assert.equal(notJob.status, 400);
});

test('job inspect: {"Job": ...} by ID or unique prefix, which job run takes back', async (t) => {
  const base = await startServer(t);
  const run = io(base, { "good.hcl": GOOD });
  assert.equal(await jobRun.run(jobRun.parse(["-detach", "good.hcl"]), run.io), 0, run.err.join("\n"));
  const inspected = io(base, {});
  assert.equal(await jobInspect.run(jobInspect.parse(["chec"]), inspected.io), 0, inspected.err.join("\n"));
  const text = inspected.out.join("\n");
  const doc = JSON.parse(text) as { Job: { ID: string; Version: number } };
  assert.equal(doc.Job.ID, "checked");
  assert.match(text, /^\{\n {4}"Job": \{/);
  const again = io(base, { "inspected.json": text });
  assert.equal(
    await jobRun.run(jobRun.parse(["-detach", "inspected.json"]), again.io),
    0,
    again.err.join("\n"),
  );
  const missing = io(base, {});
  assert.equal(await jobInspect.run(jobInspect.parse(["nope"]), missing.io), 1);
  assert.equal(missing.err[0], `Error inspecting job: No job(s) with prefix or ID "nope" found`);
});

test("job init: writes example.nomad.hcl once, which parses; -short too", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-init-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = io("http://127.0.0.1:1", {}, dir);
  assert.equal(await jobInit.run(jobInit.parse([]), first.io), 0);
  assert.deepEqual(first.out, ["Example job file written to example.nomad.hcl"]);
  const text = readFileSync(path.join(dir, "example.nomad.hcl"), "utf8");
  const job = await parseJobSpec("example.nomad.hcl", text);
  assert.equal(job.ID, "example");
  const second = io("http://127.0.0.1:1", {}, dir);
  assert.equal(await jobInit.run(jobInit.parse([]), second.io), 1);
  assert.deepEqual(second.err, ["Job 'example.nomad.hcl' already exists"]);
  assert.equal(readFileSync(path.join(dir, "example.nomad.hcl"), "utf8"), text);
  const short = io("http://127.0.0.1:1", {}, dir);
  assert.equal(await jobInit.run(jobInit.parse(["-short", "s.hcl"]), short.io), 0);
  assert.equal((await parseJobSpec("s.hcl", readFileSync(path.join(dir, "s.hcl"), "utf8"))).ID, "example");
});

test("job plan: the diff and the dry run, nothing changed; -check-index; job history", async (t) => {
  const base = await startServer(t);
  const first = io(base, { "good.hcl": GOOD });
  assert.equal(await jobRun.run(jobRun.parse(["-detach", "good.hcl"]), first.io), 0, first.err.join("\n"));
  const v2 = GOOD.replace('config { command = "/bin/true" }', 'config { command = "/bin/false" }');
  const indexBefore = (await fetch(`${base}/v1/jobs`)).headers.get("x-nomad-index");
  const plan = io(base, { "v2.hcl": v2 });
  // This server has no node: the alloc the job wants is still counted as one to create (exit 1),
  // as Nomad's reconciler counts it, and the dry run says it would find no node.
  const code = await jobPlan.run(jobPlan.parse(["v2.hcl"]), plan.io);
  assert.equal(code, 1, plan.err.join("\n"));
  const text = plan.out.join("\n");
  assert.match(
    text,
    /^\+\/- Job: "checked"\n\+\/- Task Group: "g" \(1 create\)\n {2}\+\/- Task: "t" \(forces create\/destroy update\)/,
  );
  assert.match(
    text,
    /Scheduler dry-run:\n- WARNING: Failed to place all allocations\.\n {2}Task Group "g" \(failed to place 1 allocation\):/,
  );
  assert.match(text, /Job Modify Index: \d+\n.*\n\nberth job run -check-index \d+ v2\.hcl/);
  assert.equal(
    (await fetch(`${base}/v1/jobs`)).headers.get("x-nomad-index"),
    indexBefore,
    "plan changed nothing",
  );
  const same = io(base, { "good.hcl": GOOD });
  assert.equal(await jobPlan.run(jobPlan.parse(["good.hcl"]), same.io), 0, "no change: exit 0");
  assert.match(same.out[0]!, /^Job: "checked"$/);

  // -check-index: the index the plan printed registers; a stale one is refused.
  const index = /Job Modify Index: (\d+)/.exec(text)![1]!;
  const stale = io(base, { "v2.hcl": v2 });
  assert.equal(await jobRun.run(jobRun.parse(["-detach", "-check-index", "999", "v2.hcl"]), stale.io), 1);
  assert.match(stale.err[0]!, /Enforcing job modify index 999: job exists with conflicting job modify index/);
  const checked = io(base, { "v2.hcl": v2 });
  assert.equal(await jobRun.run(jobRun.parse(["-detach", "-check-index", index, "v2.hcl"]), checked.io), 0);

  const history = io(base, {});
  assert.equal(await jobHistory.run(jobHistory.parse(["checked"]), history.io), 0, history.err.join("\n"));
  assert.deepEqual(
    history.out.filter((l) => l.startsWith("Version")),
    ["Version     = 1", "Version     = 0"],
  );
  const one = io(base, {});
  assert.equal(await jobHistory.run(jobHistory.parse(["-json", "-version", "0", "checked"]), one.io), 0);
  assert.equal((JSON.parse(one.out.join("\n")) as { Version: number }).Version, 0);
});
