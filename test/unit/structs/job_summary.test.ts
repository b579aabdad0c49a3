/** Nomad's JobSummary from a job's records (structs/job_summary.ts). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { newEval } from "../../../src/structs/eval.js";
import { jobSummaryOf } from "../../../src/structs/job_summary.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";

test("allocs counted per group by client status, pending as Starting; Queued from the newest eval", () => {
  const job = plainJob("web");
  const allocs = (["pending", "running", "running", "complete", "failed", "lost", "unknown"] as const).map(
    (s) => allocOf(job, "n1", { ClientStatus: s }),
  );
  const older = { ...newEval(job, "e1", "job-register", 0, 1), CreateIndex: 5, QueuedAllocations: { g: 9 } };
  const newer = { ...newEval(job, "e2", "job-register", 0, 1), CreateIndex: 7, QueuedAllocations: { g: 2 } };
  const s = jobSummaryOf(job, allocs, [newer, older], []);
  assert.deepEqual(s.Summary, {
    g: { Queued: 2, Complete: 1, Failed: 1, Running: 2, Starting: 1, Lost: 1, Unknown: 1 },
  });
  assert.equal(s.ModifyIndex, Math.max(job.ModifyIndex, ...allocs.map((a) => a.ModifyIndex)));
});

test("a parent's children by status: pending, running, dead", () => {
  const parent = plainJob("nightly", "batch");
  const kids = (["pending", "running", "dead", "dead"] as const).map((st, i) => ({
    ...plainJob(`nightly-periodic-${i}`, "batch"),
    ID: `nightly/periodic-${i}`,
    Status: st,
  }));
  assert.deepEqual(jobSummaryOf(parent, [], [], kids).Children, { Pending: 1, Running: 1, Dead: 2 });
  assert.deepEqual(jobSummaryOf(parent, [], [], []).Summary.g?.Queued, 0, "a group with nothing yet");
});
