/**
 * Reschedule policy and purge through the real CLI against a real `berth agent -dev` with the
 * hostpath plugin: a job whose volume cannot be staged (registered with an external ID the plugin
 * does not have) fails, is retried after its delay as its policy says, then stays failed — a few
 * allocs, not a loop — and `berth job status` shows when the next attempt is; and a purged batch job
 * run again under its ID runs again. Ends asserting nothing is left running or mounted.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import {
  AgentProcess,
  eventually,
  killProcessesUnder,
  runCli,
  startExampleDevAgent,
} from "../helpers/agent_process.js";

let dataDir: string;
let specDir: string;
let agent: AgentProcess;
let env: Record<string, string>;
let logFile: string;
let passed = 0;

interface AllocStub {
  ID: string;
  ClientStatus: string;
  DesiredStatus: string;
  ClientDescription: string;
  FollowupEvalID: string;
  NextAllocation: string;
  PreviousAllocation: string;
  RescheduleTracker: { Events: { PrevAllocID: string; Delay: number }[] } | null;
}

async function cli(args: string[]) {
  const r = await runCli(args, env);
  assert.equal(r.code, 0, `berth ${args.join(" ")} failed: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

async function cliJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await cli([...args.slice(0, 2), "-json", ...args.slice(2)])) as T;
}

async function api<T>(route: string): Promise<T> {
  const res = await fetch(env.BERTH_ADDR + route);
  assert.equal(res.status, 200, route);
  return (await res.json()) as T;
}

function spec(name: string, body: string): string {
  const file = path.join(specDir, name);
  fs.writeFileSync(file, body);
  return file;
}

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-resched-"));
  specDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-resched-specs-"));
  logFile = path.join(os.tmpdir(), `berth-e2e-resched-${process.pid}.log`);
  const started = await startExampleDevAgent(dataDir, logFile);
  agent = started.agent;
  env = { BERTH_ADDR: started.addr };
});

after(async () => {
  try {
    for (const job of ["ghostly", "once", "plugin"]) await runCli(["job", "stop", "-purge", job], env);
    assert.equal(await agent.stop(), 0, "the agent stops cleanly");
  } finally {
    agent?.kill();
    const leftovers = killProcessesUnder(dataDir);
    const mounts = await mountsUnder(dataDir);
    for (const m of mounts) {
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }
    if (passed < 2)
      process.stderr.write(
        `agent log tail:\n${fs.readFileSync(logFile, "utf8").split("\n").slice(-60).join("\n")}\n`,
      );
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(specDir, { recursive: true, force: true });
    fs.rmSync(logFile, { force: true });
    assert.deepEqual(leftovers, [], "no task left running");
    assert.deepEqual(mounts, [], "nothing left mounted under the data dir");
  }
});

test(
  "a purged batch job run again under its ID runs again, with a new alloc",
  { timeout: 120_000 },
  async () => {
    const file = spec(
      "once.hcl",
      `job "once" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config {\n        command = "/bin/sh"\n        args    = ["-c", "echo done"]\n      }\n    }\n  }\n}\n`,
    );
    const complete = async () =>
      eventually("the batch alloc to complete", async () => {
        const allocs = await api<AllocStub[]>("/v1/job/once/allocations");
        return allocs.length === 1 && allocs[0]!.ClientStatus === "complete" ? allocs[0]! : undefined;
      });
    await cli(["job", "run", file]);
    const first = await complete();
    await cli(["job", "stop", "-purge", "once"]);
    await cli(["job", "run", file]);
    const second = await complete();
    assert.notEqual(second.ID, first.ID, "the new job placed its own alloc");
    const job = await cliJson<{ Version: number; Status: string }>(["job", "status", "once"]);
    assert.deepEqual([job.Version, job.Status], [0, "dead"]);
    const status = await cli(["job", "status", "once"]);
    assert.doesNotMatch(status, new RegExp(first.ID.slice(0, 8)), "the purged job's alloc is not this job's");
    passed++;
  },
);

test(
  "a volume that cannot be staged: allocs follow the reschedule policy and job status says when the next one is",
  { timeout: 180_000 },
  async () => {
    await cli(["job", "run", "examples/hostpath/plugin.hcl"]);
    await eventually("plugin hostpath to be healthy", async () => {
      const p = await cliJson<{ NodesHealthy: number }>(["plugin", "status", "hostpath"]);
      return p.NodesHealthy >= 1 ? true : undefined;
    });
    const cap = `capability {\n  access_mode     = "single-node-writer"\n  attachment_mode = "file-system"\n}\n`;
    await cli([
      "volume",
      "register",
      spec(
        "ghost.hcl",
        `id = "ghost"\nname = "ghost"\ntype = "csi"\nplugin_id = "hostpath"\nexternal_id = "no-such-volume"\n${cap}`,
      ),
    ]);
    const job = spec(
      "ghostly.hcl",
      `job "ghostly" {
  type = "batch"
  group "g" {
    reschedule {
      attempts       = 2
      interval       = "1h"
      delay          = "10s"
      delay_function = "constant"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type            = "csi"
      source          = "ghost"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hi > /data/x"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`,
    );
    await cli(["job", "run", job]);

    // While the first replacement waits for its delay, job status says when it comes and why.
    const shown = await eventually("job status to show the next attempt", async () => {
      const out = await cli(["job", "status", "ghostly"]);
      return /Future Rescheduling Attempts/.test(out) && /\d+s from now\s+1\/2/.test(out) ? out : undefined;
    });
    assert.match(shown, /NOT_FOUND: volume no-such-volume not found/, "the reason");
    const failed = (await api<AllocStub[]>("/v1/job/ghostly/allocations"))[0]!;
    const alloc = await cli(["alloc", "status", failed.ID]);
    assert.match(alloc, /Reschedule Eligibility\s+=\s+(\d+s from now|now)/);

    // The policy allows 2 reschedules in the hour: 3 allocs, then the job stays failed (dead).
    await eventually(
      "the job to settle",
      async () =>
        (await cliJson<{ Status: string }>(["job", "status", "ghostly"])).Status === "dead"
          ? true
          : undefined,
      90_000,
    );
    const allocs = await api<AllocStub[]>("/v1/job/ghostly/allocations");
    assert.equal(allocs.length, 3, "the first alloc and 2 reschedules");
    assert.ok(allocs.every((a) => a.ClientStatus === "failed"));
    const last = allocs.find((a) => !a.NextAllocation)!;
    assert.deepEqual(
      last.RescheduleTracker!.Events.map((e) => e.Delay),
      [10e9, 10e9],
    );
    const evals = await api<{ Status: string }[]>("/v1/job/ghostly/evaluations");
    assert.deepEqual(
      evals.filter((e) => e.Status === "pending" || e.Status === "blocked"),
      [],
      "nothing more is planned",
    );
    assert.match(
      await cli(["job", "status", "ghostly"]),
      /Not Rescheduled[\s\S]*no attempts left \(2 in 1h0m0s\)/,
    );
    passed++;
  },
);
