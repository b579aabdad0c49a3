import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { prefixListed, startFakeApi, type FakeApi } from "../../fakes/api.js";
import { evalList, evalStatus } from "../../../src/cli/commands/eval_status.js";
import { jobStatus } from "../../../src/cli/commands/job_status.js";
import { formatAllocMetrics, latestFailedEval } from "../../../src/cli/evals.js";
import type { AllocationMetric, Evaluation } from "../../../src/api/index.js";
import * as fx from "../../builders/api_records.js";
import { captureIO } from "../../fakes/command_io.js";

const EVAL_ID = "e0e0e0e0-0000-4000-8000-000000000001";
const BLOCKED_ID = "b1b1b1b1-0000-4000-8000-000000000002";

const metric = (over: Partial<AllocationMetric> = {}): AllocationMetric => ({
  NodesEvaluated: 2,
  NodesFiltered: 2,
  NodesAvailable: { dc1: 2 },
  ClassFiltered: null,
  ConstraintFiltered: {
    "CSI plugin hostpath is missing from client f00dfeed-0000-4000-8000-000000000002": 1,
    "${node.class} = fast": 1,
  },
  NodesExhausted: 0,
  ClassExhausted: null,
  DimensionExhausted: null,
  QuotaExhausted: null,
  CoalescedFailures: 0,
  ...over,
});

const evaluation = (over: Partial<Evaluation>): Evaluation => ({
  ID: EVAL_ID,
  Namespace: "default",
  Priority: 50,
  Type: "batch",
  TriggeredBy: "job-register",
  JobID: fx.JOB_ID,
  JobModifyIndex: 12,
  NodeID: "",
  Status: "complete",
  StatusDescription: "",
  PreviousEval: "",
  NextEval: "",
  BlockedEval: "",
  FailedTGAllocs: null,
  QueuedAllocations: { writer: 0 },
  SnapshotIndex: 12,
  CreateIndex: 13,
  ModifyIndex: 13,
  CreateTime: fx.nsAgo(3),
  ModifyTime: fx.nsAgo(3),
  ...over,
});

const failed = evaluation({
  BlockedEval: BLOCKED_ID,
  FailedTGAllocs: { writer: metric({ CoalescedFailures: 1 }) },
  QueuedAllocations: { writer: 2 },
});
const blocked = evaluation({
  ID: BLOCKED_ID,
  TriggeredBy: "queued-allocs",
  Status: "blocked",
  StatusDescription: "created to place remaining allocations",
  PreviousEval: EVAL_ID,
  FailedTGAllocs: failed.FailedTGAllocs,
  ModifyIndex: 14,
});
const older = evaluation({ ID: "0a0a0a0a-0000-4000-8000-000000000003", CreateIndex: 10, ModifyIndex: 10 });

const PLACEMENT_FAILURE = [
  "Placement Failure",
  'Task Group "writer" (failed to place 2 allocations):',
  '  * Constraint "${node.class} = fast": 1 nodes excluded by filter',
  '  * Constraint "CSI plugin hostpath is missing from client f00dfeed-0000-4000-8000-000000000002": 1 nodes excluded by filter',
];

let api: FakeApi;
let jobEvals: Evaluation[] = [];

before(async () => {
  api = await startFakeApi({
    "GET /v1/jobs": prefixListed([fx.jobStub]),
    "GET /v1/job/writer": { json: fx.job },
    "GET /v1/job/writer/allocations": { json: [] },
    "GET /v1/job/writer/evaluations": () => ({ json: jobEvals }),
    "GET /v1/evaluations": { json: [older, failed, blocked] },
    [`GET /v1/evaluation/${EVAL_ID}`]: { json: failed },
  });
});

after(() => api.close());

const io = () => captureIO(api.address);

describe("placement failures", () => {
  it("formatAllocMetrics prints Nomad's lines, sorted, for every kind of reason", () => {
    const m = metric({
      NodesEvaluated: 0,
      NodesAvailable: { dc2: 0, dc1: 3 },
      ClassFiltered: { small: 2 },
      ConstraintFiltered: { "missing drivers": 2 },
      NodesExhausted: 1,
      DimensionExhausted: { memory: 1 },
    });
    assert.deepEqual(formatAllocMetrics(m, "  "), [
      "  * No nodes were eligible for evaluation",
      '  * No nodes are available in datacenter "dc2"',
      '  * Class "small": 2 nodes excluded by filter',
      '  * Constraint "missing drivers": 2 nodes excluded by filter',
      "  * Resources exhausted on 1 nodes",
      '  * Dimension "memory" exhausted on 1 nodes',
    ]);
  });

  it("job status shows the latest failed eval while the job has a blocked eval", async () => {
    jobEvals = [older, failed, blocked]; // the server's order: oldest first
    const o = io();
    assert.equal(await jobStatus.run(jobStatus.parse(["writer"]), o), 0);
    const at = o.out.indexOf("Placement Failure");
    assert.ok(at > 0, o.out.join("\n"));
    assert.deepEqual(o.out.slice(at - 1, at + 5), ["", ...PLACEMENT_FAILURE, ""]);
    assert.equal(o.out[at + 5], "Allocations");
    assert.equal(latestFailedEval([failed, blocked]), blocked, "the blocked eval has the freshest failures");
    assert.equal(latestFailedEval([blocked, failed]), blocked);
  });

  it("job status shows no Placement Failure once nothing is blocked; -verbose lists the evals", async () => {
    jobEvals = [failed, evaluation({ ID: BLOCKED_ID, TriggeredBy: "queued-allocs", ModifyIndex: 15 })];
    const o = io();
    assert.equal(await jobStatus.run(jobStatus.parse(["-verbose", "writer"]), o), 0);
    assert.ok(!o.out.includes("Placement Failure"), o.out.join("\n"));
    const at = o.out.indexOf("Evaluations");
    assert.deepEqual(o.out.slice(at, at + 4), [
      "Evaluations",
      "ID                                    Priority  Triggered By   Status    Placement Failures",
      `${BLOCKED_ID}  50        queued-allocs  complete  false`,
      `${EVAL_ID}  50        job-register   complete  true`,
    ]);
  });

  it("eval status shows an eval with its failed placements and the blocked eval that waits", async () => {
    const o = io();
    assert.equal(await evalStatus.run(evalStatus.parse([EVAL_ID]), o), 0);
    assert.deepEqual(o.out, [
      "ID                 = e0e0e0e0",
      "Create Time        = 3m ago",
      "Modify Time        = 3m ago",
      "Status             = complete",
      "Status Description = complete",
      "Type               = batch",
      "TriggeredBy        = job-register",
      "Job ID             = writer",
      "Namespace          = default",
      "Priority           = 50",
      "Placement Failures = true",
      "",
      "Failed Placements",
      ...PLACEMENT_FAILURE.slice(1),
      "",
      'Evaluation "b1b1b1b1" waiting for additional capacity to place remainder',
    ]);
  });

  it("eval status by a short prefix; eval list newest first with Nomad's columns and filters", async () => {
    const o = io();
    assert.equal(await evalStatus.run(evalStatus.parse(["e0e0"]), o), 0);
    assert.equal(o.out[0], "ID                 = e0e0e0e0");
    const l = io();
    assert.equal(await evalList.run(evalList.parse(["-job", "writer", "-status", "blocked"]), l), 0);
    assert.deepEqual(l.out, [
      "ID        Priority  Triggered By   Job ID  Namespace  Node ID  Status    Placement Failures",
      "b1b1b1b1  50        queued-allocs  writer  default    <none>   blocked   N/A - In Progress",
      "e0e0e0e0  50        job-register   writer  default    <none>   complete  true",
      "0a0a0a0a  50        job-register   writer  default    <none>   complete  false",
    ]);
    const sent = api.requests.filter((r) => r.url.startsWith("/v1/evaluations")).at(-1)!;
    assert.match(sent.url, /job=writer/);
    assert.match(sent.url, /status=blocked/);
  });
});
