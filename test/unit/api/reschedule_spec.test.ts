import { test } from "node:test";
import assert from "node:assert/strict";
import { parseJobHcl } from "../../../src/api/specs/jobspec.js";
import { validateJob } from "../../../src/structs/job_validate.js";

const S = 1e9;

const hcl = `job "web" {
  type = "batch"
  reschedule {
    attempts = 4
    interval = "2h"
  }
  group "a" {
    reschedule {
      delay          = "10s"
      delay_function = "exponential"
      max_delay      = "2m"
    }
    restart {
      attempts = 5
      interval = "10m"
      delay    = "20s"
      mode     = "delay"
    }
    task "t" {
      driver = "exec"
      restart {
        attempts = 1
      }
    }
  }
  group "b" {
    task "t" {
      driver = "exec"
    }
  }
}`;

test("HCL reschedule blocks: job and group level, merged by the server over the type's defaults", async () => {
  const spec = await parseJobHcl("web.hcl", hcl);
  assert.deepEqual(spec.Reschedule, { Attempts: 4, Interval: 2 * 3600 * S });
  assert.deepEqual(spec.TaskGroups[0]!.ReschedulePolicy, {
    Delay: 10 * S,
    DelayFunction: "exponential",
    MaxDelay: 120 * S,
  });
  const job = validateJob(spec);
  assert.deepEqual(job.TaskGroups[0]!.ReschedulePolicy, {
    Attempts: 4,
    Interval: 2 * 3600 * S,
    Delay: 10 * S,
    DelayFunction: "exponential",
    MaxDelay: 120 * S,
    Unlimited: false,
  });
  assert.deepEqual(job.TaskGroups[1]!.ReschedulePolicy, {
    Attempts: 4,
    Interval: 2 * 3600 * S,
    Delay: 5 * S,
    DelayFunction: "constant",
    MaxDelay: 0,
    Unlimited: false,
  });
  // A task's restart block fills what it leaves out from its group's.
  assert.deepEqual(job.TaskGroups[0]!.Tasks[0]!.RestartPolicy, {
    Attempts: 1,
    Interval: 600 * S,
    Delay: 20 * S,
    Mode: "delay",
  });
});

test("HCL: an unknown reschedule field is refused by name", async () => {
  await assert.rejects(
    parseJobHcl(
      "x.hcl",
      `job "x" {\n group "g" {\n reschedule {\n tries = 3\n }\n task "t" { driver = "exec" }\n }\n}`,
    ),
    /tries/,
  );
});

test("JSON restart policies are validated as Nomad's RestartPolicy.Validate, naming the field", () => {
  const withRestart = (r: unknown) => ({
    ID: "j",
    TaskGroups: [{ Name: "g", RestartPolicy: r, Tasks: [{ Name: "t", Driver: "exec" }] }],
  });
  assert.throws(
    () => validateJob(withRestart({ Attempts: 0, Mode: "delay" })),
    /TaskGroups\[0\]\.RestartPolicy\.Mode: restart policy "delay" with 0 attempts is ambiguous/,
  );
  assert.throws(
    () => validateJob(withRestart({ Interval: 1 * S })),
    /RestartPolicy\.Interval: can not be less than 5s \(got 1s\)/,
  );
  assert.throws(
    () => validateJob(withRestart({ Attempts: 10, Interval: 60 * S, Delay: 15 * S })),
    /cannot restart 10 times in an interval of 1m0s/,
  );
  assert.throws(
    () => validateJob(withRestart({ Mode: "sometimes" })),
    /RestartPolicy\.Mode: unknown restart mode "sometimes"/,
  );
});
