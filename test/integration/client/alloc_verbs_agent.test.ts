/**
 * Issue 11: `alloc logs [-f] [-stderr] [-tail]`, `alloc exec`, `alloc signal`, `alloc restart` and
 * `alloc stop` as a Nomad operator uses them, through a real `berth agent -dev`, the real CLI and
 * a real exec-driver task (its own mount namespace and root). Ends asserting nothing is left
 * running.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { decodeGo } from "../../nomadapi/go_decode.js";

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let failed = true;
let env: Record<string, string>;

// Prints a numbered line every 200 ms, one line on stderr, and answers SIGUSR1 on stdout.
const SCRIPT = `trap 'echo got-usr1' USR1; echo to-stderr >&2; i=0; while true; do i=$((i+1)); echo line-$i; sleep 0.2; done`;
const JOB = `job "talker" {
  group "g" {
    task "talk" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SCRIPT)}]
      }
    }
  }
}
`;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-allocverbs-")));
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  // NOMAD_ADDR only: the CLI must find the agent the way a Nomad operator's shell tells it.
  env = { NOMAD_ADDR: addr, BERTH_ADDR: "" };
  logFile = path.join(dir, "agent.log");
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  try {
    await runCli(["job", "stop", "-purge", "talker"], env);
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

async function cli(...args: string[]) {
  const r = await runCli(args, env);
  return r;
}

/** The CLI with `input` on its standard input. */
function cliWithInput(
  input: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve("bin/berth"), ...args], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function runningAlloc(notId = ""): Promise<string> {
  return eventually("a running talker alloc", async () => {
    const allocs = await getJson<{ ID: string; ClientStatus: string; DesiredStatus: string }[]>(
      addr,
      "/v1/job/talker/allocations",
    );
    return allocs.find((a) => a.ID !== notId && a.ClientStatus === "running" && a.DesiredStatus === "run")
      ?.ID;
  });
}

test("alloc logs, exec, signal, restart and stop on a running exec task", async () => {
  fs.writeFileSync(path.join(dir, "talker.hcl"), JOB);
  const run = await cli("job", "run", "-detach", path.join(dir, "talker.hcl"));
  assert.equal(run.code, 0, run.stderr);
  const id = await runningAlloc();
  const short = id.slice(0, 8);

  // logs: stdout by unique prefix; stderr; the last line only.
  const out = await eventually("three lines of output", async () => {
    const r = await cli("alloc", "logs", short);
    return r.code === 0 && r.stdout.includes("line-3\n") ? r.stdout : undefined;
  });
  assert.match(out, /^line-1\nline-2\nline-3\n/);
  const err = await cli("alloc", "logs", "-stderr", short, "talk");
  assert.equal(err.stdout, "to-stderr\n");
  const tail = await cli("alloc", "logs", "-tail", "-n", "1", id);
  assert.match(tail.stdout, /^line-\d+\n$/);

  // -f follows (both files, from their end): new lines arrive while it runs.
  const follower = spawn(process.execPath, [path.resolve("bin/berth"), "alloc", "logs", "-f", id], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let followed = "";
  follower.stdout.on("data", (d: Buffer) => (followed += d.toString()));
  try {
    await eventually("the follower to see three lines written after it started", async () =>
      followed.split("\n").length > 3 ? true : undefined,
    );
    assert.match(followed, /^(line-\d+\n)+/);
  } finally {
    follower.kill("SIGTERM");
  }

  // exec: inside the task's root (its /local), its environment, exit code and stdin passed through.
  const inside = await cli(
    "alloc",
    "exec",
    "-task",
    "talk",
    short,
    "/bin/sh",
    "-c",
    "test -d /local && echo $NOMAD_TASK_NAME",
  );
  assert.equal(inside.code, 0, inside.stderr);
  assert.equal(inside.stdout, "talk\n");
  const code = await cli("alloc", "exec", id, "/bin/sh", "-c", "echo bye >&2; exit 3");
  assert.equal(code.code, 3);
  assert.equal(code.stderr, "bye\n");
  const piped = await cliWithInput("from stdin\n", "alloc", "exec", id, "cat");
  assert.equal(piped.stdout, "from stdin\n");
  const missing = await cli("alloc", "exec", id, "/no/such/binary");
  assert.notEqual(missing.code, 0);

  // signal: the task's trap prints it.
  const sig = await cli("alloc", "signal", "-s", "SIGUSR1", id);
  assert.equal(sig.code, 0, sig.stderr);
  await eventually("the task to log the signal", async () =>
    (await cli("alloc", "logs", id)).stdout.includes("got-usr1") ? true : undefined,
  );
  const badSig = await cli("alloc", "signal", "-s", "SIGNOPE", id);
  assert.equal(badSig.code, 1);
  assert.match(badSig.stderr, /Signal: unknown signal "SIGNOPE"/);

  let lastSeen = "";
  // restart: in place, same alloc, one restart counted, "Restart Signaled" in its events.
  const restart = await cli("alloc", "restart", id);
  assert.equal(restart.code, 0, restart.stderr);
  try {
    await eventually("the task to be running again after a restart", async () => {
      const a = await getJson<{
        ClientStatus: string;
        TaskStates: Record<string, { State: string; Restarts: number; Events: { Type: string }[] }>;
      }>(addr, `/v1/allocation/${id}`);
      const t = a.TaskStates.talk!;
      lastSeen = JSON.stringify(t.Events.slice(-6));
      return t.Restarts >= 1 && t.State === "running" && t.Events.some((e) => e.Type === "Restart Signaled")
        ? true
        : undefined;
    });
  } catch (e) {
    throw new Error(`${String(e)}; last events: ${lastSeen}`, { cause: e });
  }

  // stop: the alloc ends and the scheduler places a replacement; the monitor shows it.
  const stop = await cli("alloc", "stop", short);
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /==> .*Monitoring evaluation/);
  assert.match(stop.stdout, /Evaluation triggered by job "talker"/);
  const replacement = await runningAlloc(id);
  assert.notEqual(replacement, id);
  failed = false;
});

// A task that spins (a busy loop holds one core) beside one that sleeps, both held to resources.
const BUSY_JOB = `job "busy" {
  group "g" {
    task "spin" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while :; do :; done"]
      }
      resources {
        cpu    = 500
        memory = 64
      }
    }
    task "idle" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
`;

interface Usage {
  MemoryStats: { RSS: number; Usage: number; Measured: string[] };
  CpuStats: { Percent: number; TotalTicks: number; UserMode: number; Measured: string[] };
}

test("alloc status -stats and /v1/client/allocation/:id/stats: what each task uses, measured on its node", async () => {
  fs.writeFileSync(path.join(dir, "busy.hcl"), BUSY_JOB);
  const run = await cli("job", "run", "-detach", path.join(dir, "busy.hcl"));
  assert.equal(run.code, 0, run.stderr);
  try {
    const id = await eventually("a running busy alloc", async () => {
      const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(addr, "/v1/job/busy/allocations");
      return allocs.find((a) => a.ClientStatus === "running")?.ID;
    });
    const stats = await getJson<{
      ResourceUsage: Usage;
      Tasks: Record<string, { ResourceUsage: Usage; Timestamp: number }>;
      Timestamp: number;
    }>(addr, `/v1/client/allocation/${id}/stats`);
    decodeGo(stats, "AllocResourceUsage");
    const spin = stats.Tasks.spin!.ResourceUsage;
    const idle = stats.Tasks.idle!.ResourceUsage;
    // A busy loop: a good share of a core even on a loaded machine; a sleep: next to nothing.
    assert.ok(spin.CpuStats.Percent > 20, `spin's CPU: ${JSON.stringify(spin.CpuStats)}`);
    assert.ok(spin.CpuStats.TotalTicks > 0 && spin.CpuStats.UserMode > 0, JSON.stringify(spin.CpuStats));
    assert.ok(idle.CpuStats.Percent < 10, `idle's CPU: ${JSON.stringify(idle.CpuStats)}`);
    assert.ok(spin.CpuStats.Measured.includes("Percent"));
    for (const u of [spin, idle]) {
      assert.ok(u.MemoryStats.Measured.includes("Usage"), JSON.stringify(u.MemoryStats));
      assert.ok(u.MemoryStats.Usage > 0, JSON.stringify(u.MemoryStats));
    }
    assert.ok(stats.ResourceUsage.CpuStats.Percent >= spin.CpuStats.Percent, "the alloc's is the tasks' sum");
    assert.ok(stats.Timestamp > 0 && stats.Tasks.spin!.Timestamp > 0);

    const plain = await cli("alloc", "status", id.slice(0, 8));
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(
      plain.stdout,
      /Task Resources:\nCPU\s+Memory\s+Disk\s+Addresses\n\d+\/500 MHz\s+\S+ \S+\/64 MiB\s+300 MiB/,
    );
    assert.doesNotMatch(plain.stdout, /CPU Stats/);
    const detailed = await cli("alloc", "status", "-stats", id);
    assert.equal(detailed.code, 0, detailed.stderr);
    assert.match(detailed.stdout, /Memory Stats\n.*Usage.*\n.*B/);
    assert.match(detailed.stdout, /CPU Stats\nPercent\s+System Mode\s+.*User Mode\n\d+\.\d\d%/);

    // The -dev agent's own routes: its server has a leader and its node agent a server.
    assert.deepEqual(await getJson(addr, "/v1/agent/health"), {
      server: { ok: true, message: "ok" },
      client: { ok: true, message: "ok" },
    });
    const self = await getJson<{
      config: { Version: string; ClientEnabled: boolean; ServerEnabled: boolean };
    }>(addr, "/v1/agent/self");
    assert.deepEqual([self.config.ServerEnabled, self.config.ClientEnabled], [true, true]);
    assert.match(self.config.Version, /^\d+\.\d+\.\d+/);

    const missing = await fetch(`${addr}/v1/client/allocation/00000000-0000-4000-8000-000000000000/stats`);
    assert.equal(missing.status, 404);
  } finally {
    await cli("job", "stop", "-purge", "busy");
  }
});
