/**
 * `berth deployment list|status|pause|resume|fail`, `job scale`, `job revert` and `job history -p`
 * as an operator uses them, against the real HTTP API of one in-process server (no nodes: the
 * job's deployment stays running, which is what pause, resume and fail need).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiClient } from "../../../src/api/index.js";
import { deploymentList, deploymentStatus } from "../../../src/cli/commands/deployment_status.js";
import {
  deploymentFail,
  deploymentPause,
  deploymentResume,
} from "../../../src/cli/commands/deployment_ops.js";
import { jobHistory } from "../../../src/cli/commands/job_history.js";
import { jobRevert } from "../../../src/cli/commands/job_revert.js";
import { jobRun } from "../../../src/cli/commands/job_run.js";
import { jobScale } from "../../../src/cli/commands/job_scale.js";
import type { Command, Parsed } from "../../../src/cli/command.js";
import { processIO, type CommandIO } from "../../../src/cli/io.js";
import { startServer } from "./fake_agent.js";

const JOB = `job "web" {\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/sleep" }\n    }\n  }\n}\n`;

async function run<P extends Parsed>(base: string, c: Command<P>, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIO = {
    ...processIO(new ApiClient({ address: base })),
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    readFile: async () => JOB,
  };
  const code = await c.run(c.parse(argv), io);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const get = async <T>(base: string, path: string) => (await (await fetch(`${base}${path}`)).json()) as T;

test("deployment commands, job scale, job revert and job history -p", async (t) => {
  const base = await startServer(t);
  assert.equal((await run(base, deploymentList, [])).out, "No deployments found");
  assert.equal((await run(base, jobRun, ["-detach", "web.hcl"])).code, 0);
  const [d] = await get<{ ID: string; Status: string }[]>(base, "/v1/deployments");
  assert.equal(d?.Status, "running");
  const short = d.ID.slice(0, 8);

  const list = await run(base, deploymentList, []);
  assert.match(
    list.out,
    /^ID +Job ID +Job Version +Status +Description\n\w{8} +web +0 +running +Deployment is running$/,
  );
  const status = await run(base, deploymentStatus, [d.ID.slice(0, 5)]);
  assert.equal(status.code, 0, status.err);
  assert.match(status.out, /^ID +=  ?\w{8}\nJob ID += web\nJob Version += 0\nStatus += running/);
  assert.match(status.out, /Deployed\nTask Group +(Auto Revert +)?Desired +Placed +Healthy +Unhealthy\ng /);
  const missing = await run(base, deploymentStatus, ["ffffffff"]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /No deployment\(s\) with prefix or id "ffffffff" found/);

  // Scaling waits for the rollout: refused while the deployment is active.
  const blocked = await run(base, jobScale, ["-detach", "web", "3"]);
  assert.equal(blocked.code, 1);
  assert.match(
    blocked.err,
    /^Error submitting scaling request: .*job scaling blocked due to active deployment/,
  );

  const paused = await run(base, deploymentPause, [short]);
  assert.equal(paused.out, `Deployment "${short}" paused`);
  assert.equal((await get<{ Status: string }>(base, `/v1/deployment/${d.ID}`)).Status, "paused");
  const resumed = await run(base, deploymentResume, ["-detach", short]);
  assert.match(resumed.out, new RegExp(`^Deployment "${short}" resumed\nEvaluation ID: [0-9a-f-]{36}$`));
  const failed = await run(base, deploymentFail, ["-detach", short]);
  assert.match(failed.out, new RegExp(`^Deployment "${short}" failed\nEvaluation ID: `));
  assert.match((await run(base, deploymentFail, [short])).err, /has terminal status "failed"/);

  const scaled = await run(base, jobScale, ["-detach", "web", "3"]);
  assert.equal(scaled.code, 0, scaled.err);
  const evalId = /Evaluation ID: (\S+)/.exec(scaled.out)![1]!;
  assert.equal(
    (await get<{ TriggeredBy: string }>(base, `/v1/evaluation/${evalId}`)).TriggeredBy,
    "job-scaling",
  );
  const scale = await get<{ TaskGroups: Record<string, { Desired: number }> }>(base, "/v1/job/web/scale");
  assert.equal(scale.TaskGroups.g?.Desired, 3);
  assert.match((await run(base, jobScale, ["web", "x", "2"])).err, /Group x not found within job/);

  const history = await run(base, jobHistory, ["-p", "web"]);
  assert.equal(history.code, 0, history.err);
  assert.match(
    history.out,
    /^Version += 1\nStable += false\nSubmit Date += .*\nDiff += *\n\+\/- Job: "web"\n\+\/- Task Group: "g"\n {2}\+\/- Count: +"1" => "3"/,
  );
  assert.ok(!/Version += 0\n(.*\n){2}Diff/.test(history.out), "the oldest version has no diff");

  const reverted = await run(base, jobRevert, ["-detach", "web", "0"]);
  assert.equal(reverted.code, 0, reverted.err);
  const job = await get<{ Version: number; TaskGroups: { Count: number }[] }>(base, "/v1/job/web");
  assert.deepEqual([job.Version, job.TaskGroups[0]?.Count], [2, 1]);
  const again = await run(base, jobRevert, ["web", "2"]);
  assert.match(again.err, /can't revert to current version/);
});
