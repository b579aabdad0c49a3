import { test } from "node:test";
import assert from "node:assert/strict";
import type { AllocationListStub, Evaluation, Job } from "../../../src/api/index.js";
import { allocRescheduleLines, reschedulingSection } from "../../../src/cli/reschedule_info.js";
import { NOW, job as fxJob } from "../../builders/api_records.js";

const S = 1e9;
const nowNs = NOW * 1e6;
const policy = {
  Attempts: 2,
  Interval: 3600 * S,
  Delay: 5 * S,
  DelayFunction: "constant",
  MaxDelay: 0,
  Unlimited: false,
};
const job = {
  ...fxJob,
  Status: "pending",
  TaskGroups: [{ ...fxJob.TaskGroups[0]!, ReschedulePolicy: policy }],
} as unknown as Job;

const failed = {
  ID: "aaaaaaaa-0000-4000-8000-000000000001",
  TaskGroup: "writer",
  ClientStatus: "failed",
  DesiredStatus: "run",
  ClientDescription: "",
  TaskStates: {
    writer: {
      State: "dead",
      Failed: true,
      Restarts: 0,
      StartedAt: null,
      FinishedAt: null,
      Events: [
        {
          Type: "Setup Failure",
          Time: nowNs - 2 * S,
          DisplayMessage: "claiming volume demo: volume not found",
          Details: { fails_task: "true" },
        },
        {
          Type: "Not Restarting",
          Time: nowNs - 3 * S,
          DisplayMessage: "Error was unrecoverable",
          Details: {},
        },
      ],
    },
  },
  ModifyTime: nowNs - S,
  FollowupEvalID: "eeeeeeee-0000-4000-8000-000000000009",
  RescheduleTracker: {
    Events: [{ RescheduleTime: nowNs - 60 * S, PrevAllocID: "x", PrevNodeID: "n", Delay: 5 * S }],
  },
} as unknown as AllocationListStub;

const followup = {
  ID: "eeeeeeee-0000-4000-8000-000000000009",
  Status: "pending",
  WaitUntil: new Date(NOW + 4000).toISOString(),
} as unknown as Evaluation;

test("job status: a failed alloc's pending follow-up shows when, which attempt and why", () => {
  const lines = reschedulingSection(job, [failed], [followup], false, NOW);
  assert.equal(lines[1], "Future Rescheduling Attempts");
  assert.match(lines[2]!, /^Task Group\s+Eval ID\s+Eval Time\s+Attempt\s+Failed Alloc\s+Reason$/);
  assert.match(
    lines[3]!,
    /^writer\s+eeeeeeee\s+4s from now\s+2\/2\s+aaaaaaaa\s+Setup Failure: claiming volume demo: volume not found$/,
  );
});

test("job status: a failed alloc with no attempts left is listed once the job is dead", () => {
  const spent = { ...failed, FollowupEvalID: "" };
  assert.deepEqual(
    reschedulingSection(job, [spent], [], false, NOW),
    [],
    "not while the job may still change",
  );
  const lines = reschedulingSection({ ...job, Status: "dead" }, [spent], [], false, NOW);
  assert.equal(lines[1], "Not Rescheduled");
  assert.match(lines[3]!, /writer\s+aaaaaaaa\s+no attempts left \(2 in 1h0m0s\)\s+Setup Failure/);
});

test("alloc status: Reschedule Attempts, Replacement Alloc ID and Reschedule Eligibility as Nomad's", () => {
  const a = { ...failed, Job: job, NextAllocation: "bbbbbbbb-0000-4000-8000-000000000002" };
  assert.deepEqual(allocRescheduleLines(a, followup, false, NOW), [
    ["Reschedule Attempts", "1/2"],
    ["Replacement Alloc ID", "bbbbbbbb"],
    ["Reschedule Eligibility", "4s from now"],
  ]);
  assert.deepEqual(
    allocRescheduleLines({ ...a, RescheduleTracker: null, NextAllocation: "" }, undefined, false, NOW),
    [],
  );
});
