/**
 * End to end through a real `berth agent -dev` and the CLI (issue 11's acceptance): a task with
 * `resources { memory = 64 }` is held to 64 MiB by its cgroup, so one that touches 200 MiB is
 * OOM-killed, and `berth alloc status` says so. Its cgroup is gone afterwards.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { detectCgroups } from "../../../src/client/drivers/shared/cgroups/detect.js";
import {
  type AgentProcess,
  eventually,
  getJson,
  killProcessGroupsUnder,
  runCli,
  startExampleDevAgent,
} from "../../helpers/agent_process.js";

let dataDir: string;
let logFile: string;
let agent: AgentProcess | undefined;
let addr: string;
let passed = false;

const JOB = `job "hog" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "hog" {
      driver = "raw_exec"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = ["-e", "Buffer.alloc(200 * 1024 * 1024, 1)"]
      }
      resources {
        memory = 64
      }
    }
  }
}
`;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-res-agent-"));
  logFile = path.join(os.tmpdir(), `berth-res-agent-${process.pid}.log`);
  const started = await startExampleDevAgent(dataDir, logFile);
  agent = started.agent;
  addr = started.addr;
});

after(async () => {
  try {
    await agent?.stop();
  } finally {
    const leftovers = killProcessGroupsUnder(dataDir);
    if (leftovers.length > 0 || !passed) {
      process.stderr.write(
        `agent log (last 60 lines):\n${fs.readFileSync(logFile, "utf8").split("\n").slice(-60).join("\n")}\n`,
      );
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(logFile, { force: true });
    assert.deepEqual(leftovers, [], "task processes left running");
  }
});

test("resources { memory = 64 }: a task touching 200 MiB is OOM-killed and alloc status shows it", async () => {
  const jobFile = path.join(dataDir, "hog.hcl");
  fs.writeFileSync(jobFile, JOB);
  const env = { BERTH_ADDR: addr };
  const run = await runCli(["job", "run", jobFile], env);
  assert.equal(run.code, 0, run.stderr);
  const job = await getJson<{ TaskGroups: { Tasks: { Resources: { MemoryMB: number } }[] }[] }>(
    addr,
    "/v1/job/hog",
  );
  assert.equal(job.TaskGroups[0]!.Tasks[0]!.Resources.MemoryMB, 64);
  const allocId = await eventually(
    "the alloc to fail",
    async () => {
      const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(addr, "/v1/job/hog/allocations");
      return allocs.find((a) => a.ClientStatus === "failed")?.ID;
    },
    60_000,
  );
  const status = await runCli(["alloc", "status", allocId], env);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /Terminated\s+Exit Code: 137, Signal: SIGKILL, Exit Message: "OOM Killed"/);
  const alloc = await getJson<{
    TaskStates: Record<string, { Events: { Type: string; Details: Record<string, string> }[] }>;
  }>(addr, `/v1/allocation/${allocId}`);
  const term = alloc.TaskStates.hog?.Events.find((e) => e.Type === "Terminated");
  assert.equal(term?.Details.oom_killed, "true");

  // The task's cgroups went with it (the agent shares this test's cgroups: it is our child).
  const host = await detectCgroups();
  assert.equal(host.mode, "v1");
  if (host.mode === "v1") {
    for (const base of Object.values(host.bases)) {
      assert.equal(
        fs.existsSync(path.join(base, "berth", `${allocId}.hog`)),
        false,
        `cgroup left in ${base}`,
      );
    }
  }
  passed = true;
});
