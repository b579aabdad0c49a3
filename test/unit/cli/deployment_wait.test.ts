/**
 * `job run`'s deployment monitor says why a deployment waits (cli/deployment_wait.ts) and prints
 * the deployment from its first poll, again at each change, instead of nothing until it ends.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { deploymentWaitReasons } from "../../../src/cli/deployment_wait.js";
import { monitorEvaluation } from "../../../src/cli/monitor.js";
import { ApiClient } from "../../../src/api/index.js";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";

const metric = {
  NodesEvaluated: 0,
  NodesFiltered: 0,
  NodesAvailable: {},
  ClassFiltered: null,
  ConstraintFiltered: null,
  NodesExhausted: 0,
  ClassExhausted: null,
  DimensionExhausted: null,
  QuotaExhausted: null,
  CoalescedFailures: 1,
};
const group = (over: Record<string, unknown>) => ({
  DesiredTotal: 2,
  PlacedAllocs: 0,
  HealthyAllocs: 0,
  UnhealthyAllocs: 0,
  DesiredCanaries: 0,
  Promoted: false,
  ...over,
});
const dep = (status: string, g: Record<string, unknown>) => ({
  Status: status,
  TaskGroups: { web: group(g) },
});

describe("deployment wait reasons", () => {
  it("names a placement failure with the placement metrics", () => {
    const r = deploymentWaitReasons(dep("running", {}), { FailedTGAllocs: { web: metric } }, "d1");
    assert.deepEqual(r, [
      `Task group "web" is waiting for capacity: 2 allocations found no node`,
      "  * No nodes were eligible for evaluation",
    ]);
  });
  it("names unhealthy allocs, allocs not yet healthy, a pause and a promotion to make", () => {
    assert.deepEqual(
      deploymentWaitReasons(dep("running", { PlacedAllocs: 2, UnhealthyAllocs: 1 }), undefined, "d1"),
      [
        `Task group "web" has 1 unhealthy allocation`,
        `Task group "web" is waiting for 1 allocation to become healthy`,
      ],
    );
    assert.deepEqual(
      deploymentWaitReasons(dep("paused", { PlacedAllocs: 2, HealthyAllocs: 2 }), undefined, "d1"),
      [`Deployment is paused; "berth deployment resume d1" continues it`],
    );
    const canary = { DesiredCanaries: 1, PlacedAllocs: 1, HealthyAllocs: 1 };
    assert.deepEqual(deploymentWaitReasons(dep("running", canary), undefined, "d1"), [
      `Task group "web": canaries healthy, waiting for promotion ("berth deployment promote d1")`,
    ]);
    assert.deepEqual(
      deploymentWaitReasons(dep("running", { ...canary, AutoPromote: true }), undefined, "d1"),
      [],
    );
    assert.deepEqual(
      deploymentWaitReasons(dep("running", { PlacedAllocs: 1, HealthyAllocs: 1 }), undefined, "d1"),
      [`Task group "web" has placed 1 of 2 allocations`],
    );
  });
});

const apis: FakeApi[] = [];
after(() => Promise.all(apis.map((a) => a.close())));

describe("job run's deployment monitor", () => {
  it("prints the waiting deployment and why at once, and each change, then the end", async () => {
    const states = [
      { Status: "running", StatusDescription: "Deployment is running", ...group({}) },
      { Status: "running", StatusDescription: "Deployment is running", ...group({}) },
      { Status: "running", StatusDescription: "Deployment is running", ...group({ PlacedAllocs: 2 }) },
      {
        Status: "successful",
        StatusDescription: "Deployment completed successfully",
        ...group({ PlacedAllocs: 2, HealthyAllocs: 2 }),
      },
    ];
    let n = 0;
    const api = await startFakeApi({
      "GET /v1/evaluation/e1": {
        json: {
          ID: "e1",
          Status: "complete",
          JobID: "web",
          NodeID: "",
          DeploymentID: "d1",
          CreateIndex: 1,
          FailedTGAllocs: null,
          NextEval: "",
          BlockedEval: "",
        },
      },
      "GET /v1/evaluation/e1/allocations": { json: [] },
      "GET /v1/job/web/evaluations": {
        json: [{ ID: "e2", Status: "blocked", CreateIndex: 2, FailedTGAllocs: { web: metric } }],
      },
      "GET /v1/deployment/d1": () => {
        const { Status, StatusDescription, ...g } = states[Math.min(n++, states.length - 1)]!;
        return {
          json: { ID: "d1", JobID: "web", JobVersion: 0, Status, StatusDescription, TaskGroups: { web: g } },
        };
      },
    });
    apis.push(api);
    const io = captureIO(api.address, {});
    const client = new ApiClient({ address: api.address });
    const code = await monitorEvaluation("e1", {
      io,
      verbose: true,
      sleep: () => Promise.resolve(),
      formatTime: () => "T",
      getDeployment: (id) => client.deployments.info(id),
      jobEvaluations: (id) => client.jobs.evaluations(id),
    });
    assert.equal(code, 0, io.err.join("\n"));
    const text = io.out.join("\n");
    // The first poll already shows the deployment and why it waits; an unchanged poll adds nothing.
    assert.equal(
      text.split('Task group "web" is waiting for capacity: 2 allocations found no node').length,
      2,
      text,
    );
    assert.match(
      text,
      /==> T: Monitoring deployment "d1"\n\n {4}T\n {4}ID {10}= d1\n[^]*Task group "web" is waiting for capacity/,
    );
    assert.match(text, /Task group "web" is waiting for 2 allocations to become healthy/);
    assert.match(text, /==> T: Deployment "d1" successful/);
  });
});
