/**
 * `job run` monitors the evaluation and its deployment as Nomad's CLI does (a fake API stands in
 * for the agent; the poll interval is shortened through CommandIO.sleep).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { jobRun } from "../../../src/cli/commands/job_run.js";
import type { Evaluation } from "../../../src/api/index.js";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";
import * as fx from "../../builders/api_records.js";

const EVAL_ID = "e0e0e0e0-0000-4000-8000-000000000001";
const DEPLOY_ID = "d0d0d0d0-0000-4000-8000-000000000002";
const JOBSPEC = `job "writer" {\n  type = "batch"\n  group "writer" {\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n`;

const evaluation = (over: Partial<Evaluation> & { DeploymentID?: string }): Evaluation => ({
  ID: EVAL_ID,
  Namespace: "default",
  Priority: 50,
  Type: "batch",
  TriggeredBy: "job-register",
  JobID: fx.JOB_ID,
  JobModifyIndex: 12,
  NodeID: "",
  Status: "pending",
  StatusDescription: "",
  PreviousEval: "",
  NextEval: "",
  BlockedEval: "",
  FailedTGAllocs: null,
  QueuedAllocations: null,
  SnapshotIndex: 12,
  CreateIndex: 13,
  ModifyIndex: 13,
  CreateTime: 0,
  ModifyTime: 0,
  ...over,
});

const apis: FakeApi[] = [];
after(() => Promise.all(apis.map((a) => a.close())));

/** An agent whose eval answers each state in turn (the last one repeats). */
async function agent(states: Evaluation[], deployments: { Status: string }[] = []) {
  let e = 0;
  let d = 0;
  const api = await startFakeApi({
    "PUT /v1/jobs": {
      json: { EvalID: EVAL_ID, EvalCreateIndex: 13, JobModifyIndex: 12, Warnings: "", Index: 13 },
    },
    [`GET /v1/evaluation/${EVAL_ID}`]: () => ({ json: states[Math.min(e++, states.length - 1)] }),
    [`GET /v1/evaluation/${EVAL_ID}/allocations`]: () => ({
      json: e > 1 ? [{ ...fx.allocStub, CreateIndex: 13, DesiredStatus: "run" }] : [],
    }),
    [`GET /v1/deployment/${DEPLOY_ID}`]: () => ({
      json: {
        ID: DEPLOY_ID,
        JobID: fx.JOB_ID,
        JobVersion: 1,
        StatusDescription: "Deployment completed successfully",
        TaskGroups: { writer: { DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: 1, UnhealthyAllocs: 0 } },
        ...deployments[Math.min(d++, deployments.length - 1)],
      },
    }),
  });
  apis.push(api);
  return api;
}

async function run(api: FakeApi, argv: string[]) {
  const io = captureIO(api.address, { "job.hcl": JOBSPEC });
  io.sleep = () => Promise.resolve();
  const code = await jobRun.run(jobRun.parse([...argv, "job.hcl"]), io);
  return { code, out: io.out, err: io.err };
}

/** The monitor's lines without their time prefix. */
const bare = (lines: string[]) => lines.map((l) => l.replace(/^(==> | {4})[^ ]+: /, "$1"));

describe("job run: monitoring", () => {
  it("prints the evaluation's progress until it finishes, as Nomad's monitor does", async () => {
    const api = await agent([evaluation({}), evaluation({ Status: "complete" })]);
    const r = await run(api, []);
    assert.equal(r.code, 0, r.err.join("\n"));
    assert.deepEqual(bare(r.out), [
      `==> Monitoring evaluation "e0e0e0e0"`,
      `    Evaluation triggered by job "writer"`,
      `    Evaluation status changed: "" -> "pending"`,
      `    Allocation "a1b2c3d4" created: node "f00dfeed", group "writer"`,
      `    Evaluation status changed: "pending" -> "complete"`,
      `==> Evaluation "e0e0e0e0" finished with status "complete"`,
    ]);
    assert.match(r.out[0]!, /^==> \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d): /);
  });

  it("placement failures: listed per group, exit code 2", async () => {
    const metric = {
      NodesEvaluated: 1,
      NodesFiltered: 0,
      NodesAvailable: { dc1: 1 },
      ClassFiltered: null,
      ConstraintFiltered: null,
      NodesExhausted: 1,
      ClassExhausted: null,
      DimensionExhausted: { "memory exhausted": 1 },
      QuotaExhausted: null,
      CoalescedFailures: 0,
    };
    const api = await agent([evaluation({ Status: "complete", FailedTGAllocs: { writer: metric } })]);
    const r = await run(api, []);
    assert.equal(r.code, 2);
    assert.deepEqual(bare(r.out).slice(-4), [
      `==> Evaluation "e0e0e0e0" finished with status "complete" but failed to place all allocations:`,
      `==> Task Group "writer" (failed to place 1 allocation):`,
      "==>   * Resources exhausted on 1 nodes",
      `==>   * Dimension "memory exhausted" exhausted on 1 nodes`,
    ]);
  });

  it("follows the eval's deployment to its end and prints it; a failed deployment exits 1", async () => {
    const done = evaluation({ Status: "complete", DeploymentID: DEPLOY_ID });
    const ok = await run(await agent([done], [{ Status: "running" }, { Status: "successful" }]), [
      "-verbose",
    ]);
    assert.equal(ok.code, 0, ok.err.join("\n"));
    const text = bare(ok.out).join("\n");
    assert.match(text, new RegExp(`Evaluation within deployment: "${DEPLOY_ID}"`));
    assert.match(text, new RegExp(`==> Monitoring deployment "${DEPLOY_ID}"`));
    assert.match(text, new RegExp(`==> Deployment "${DEPLOY_ID}" successful`));
    assert.match(
      text,
      /Deployed\n {4}Task Group {2}Desired {2}Placed {2}Healthy {2}Unhealthy\n {4}writer {6}1 {8}1 {7}1 {8}0/,
    );

    const bad = await run(await agent([done], [{ Status: "failed" }]), []);
    assert.equal(bad.code, 1);
    assert.match(bare(bad.err).join("\n"), /==> Deployment "d0d0d0d0" failed/);
  });

  it("-detach registers and prints the evaluation ID without polling; -output submits nothing", async () => {
    const api = await agent([evaluation({})]);
    const r = await run(api, ["-detach"]);
    assert.equal(r.code, 0);
    assert.deepEqual(r.out, ["Job registration successful", `Evaluation ID: ${EVAL_ID}`]);
    assert.deepEqual(
      api.requests.map((q) => `${q.method} ${q.url}`),
      ["PUT /v1/jobs"],
    );
    const before = api.requests.length;
    const o = await run(api, ["-output"]);
    assert.equal(o.code, 0);
    assert.equal(JSON.parse(o.out.join("\n")).Job.ID, "writer");
    assert.equal(api.requests.length, before);
  });
});
