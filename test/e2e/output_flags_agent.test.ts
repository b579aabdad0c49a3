/**
 * Nomad's output and input flags through the real CLI against a real `berth agent -dev`: a jobspec
 * turned into the API's JSON by `job run -output` goes back in with `job run|plan|validate -json`;
 * `job plan -json-output` and `-t` print the plan response with plan's exit codes; `-t` formats
 * `job inspect`, `job status`, `node status`, `eval list` and `server members`; `-json` with `-t`
 * and a broken template are one line and exit 1. A raw_exec batch job running /bin/true is all the
 * agent runs; the agent is stopped and its directory removed even when an assertion fails.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import {
  eventually,
  killProcessGroupsUnder,
  logTail,
  runCli,
  startExampleDevAgent,
} from "../helpers/agent_process.js";

const JOBSPEC = `job "tmpl" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;

test("-t, -json, -json-output through the CLI against berth agent -dev", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-tmpl-e2e-"));
  const logFile = path.join(dir, "agent.log");
  const { agent, addr } = await startExampleDevAgent(path.join(dir, "data"), logFile);
  let passed = false;
  t.after(async () => {
    await agent.stop();
    killProcessGroupsUnder(dir);
    if (!passed) process.stderr.write(`agent log:\n${logTail(logFile)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = { BERTH_ADDR: addr };
  const cli = (args: string[]) => runCli(args, env);
  const hcl = path.join(dir, "tmpl.nomad.hcl");
  const json = path.join(dir, "tmpl.json");
  fs.writeFileSync(hcl, JOBSPEC);

  // The HCL as the API's JSON ({"Job": ...}), then read back with -json.
  const output = await cli(["job", "run", "-output", hcl]);
  assert.equal(output.code, 0, output.stderr);
  fs.writeFileSync(json, output.stdout);
  const valid = await cli(["job", "validate", "-json", json]);
  assert.deepEqual([valid.code, valid.stdout.trim()], [0, "Job validation successful"], valid.stderr);
  const notJson = await cli(["job", "validate", "-json", hcl]);
  assert.equal(notJson.code, 1);
  assert.equal(
    notJson.stderr.trim(),
    "Error getting job struct: Failed to parse JSON job: invalid character 'j' looking for beginning of value",
  );

  // plan: the response as JSON or through a template; exit 1, as a new job places allocs.
  const planJson = await cli(["job", "plan", "-json", "-json-output", json]);
  assert.equal(planJson.code, 1, planJson.stderr);
  const plan = JSON.parse(planJson.stdout) as {
    Diff: { Type: string };
    Annotations: { DesiredTGUpdates: Record<string, { Place: number }> };
  };
  assert.equal(plan.Diff.Type, "Added");
  assert.equal(plan.Annotations.DesiredTGUpdates.g?.Place, 1);
  const planT = await cli(["job", "plan", "-json", "-t", "{{.Diff.Type}} {{.JobModifyIndex}}", json]);
  assert.deepEqual([planT.code, planT.stdout], [1, "Added 0\n"], planT.stderr);
  const both = await cli(["job", "plan", "-json-output", "-t", "{{.}}", json]);
  assert.deepEqual(
    [both.code, both.stderr.trim()],
    [255, "Both -json-output and -t formatting are not allowed"],
  );

  const run = await cli(["job", "run", "-json", json]);
  assert.equal(run.code, 0, run.stderr);

  const inspect = await cli([
    "job",
    "inspect",
    "-t",
    "{{.ID}} {{(index .TaskGroups 0).Name}} {{.Type}}",
    "tmpl",
  ]);
  assert.deepEqual([inspect.code, inspect.stdout], [0, "tmpl g batch\n"], inspect.stderr);
  // The job finishes: its one alloc complete, seen through job status's -t.
  await eventually("the batch job's alloc to complete", async () => {
    const r = await cli(["job", "status", "-t", "{{range .}}{{.ID}}={{.Status}};{{end}}"]);
    return r.stdout.includes("tmpl=dead;") ? true : undefined;
  });
  const nodes = await cli([
    "node",
    "status",
    "-t",
    '{{range .}}{{if eq .Status "ready"}}{{.Name}} ready{{"\\n"}}{{end}}{{end}}',
  ]);
  assert.equal(nodes.code, 0, nodes.stderr);
  assert.match(nodes.stdout, /^\S+ ready\n\n$/);
  const evals = await cli([
    "eval",
    "list",
    "-t",
    '{{range .}}{{if eq .JobID "tmpl"}}{{.TriggeredBy}} {{end}}{{end}}',
  ]);
  assert.match(evals.stdout, /job-register/);
  const leader = await cli([
    "server",
    "members",
    "-t",
    '{{range .}}{{if eq .Tags.Leader "true"}}leader={{.Status}}{{end}}{{end}}',
  ]);
  assert.deepEqual([leader.code, leader.stdout], [0, "leader=alive\n"], leader.stderr);

  // Refusals and template errors: one line on stderr, exit 1.
  const refused = await cli(["job", "inspect", "-json", "-t", "{{.ID}}", "tmpl"]);
  assert.deepEqual(
    [refused.code, refused.stdout, refused.stderr],
    [1, "", "Both json and template formatting are not allowed\n"],
  );
  const broken = await cli(["job", "inspect", "-t", "{{.Nope}}", "tmpl"]);
  assert.equal(broken.code, 1);
  assert.equal(
    broken.stderr,
    'Error formatting the data: template: :1:2: executing "" at <.Nope>: can\'t evaluate field Nope in type struct\n',
  );
  passed = true;
});
