/**
 * Issue 30 item 6, through a real `berth agent -dev` and the real CLI:
 * 1. `alloc exec` runs inside the task's cgroup: for an exec-driver task and a raw_exec task with
 *    `resources { memory = 64 }` the session's /proc/self/cgroup equals the task's own, and a
 *    session that allocates well over 64 MiB is OOM-killed instead of running unlimited in the
 *    agent's cgroup (bounded at 128 MiB, so a regression cannot eat the machine). The same holds
 *    after an agent restart (the task's handle, recovered from the state DB, names its cgroup).
 * 2. `alloc logs` of a batch alloc that finished before the agent restarted (SIGTERM, started again
 *    on the same data dir): the agent runs no runner for it any more, and the logs are read from
 *    the files still in its alloc dir; `-stdout -f` prints them and ends, `-f` ends.
 * A persistent `-server -client` agent (a -dev agent stops its tasks when it stops). Ends asserting
 * nothing is left running.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
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

let dir: string;
let agent: AgentProcess;
let env: Record<string, string>;
let logFile: string;
let failed = true;
let port: number;

// Each task records its own cgroups on stdout, then waits.
const RECORD = "cat /proc/self/cgroup; echo ===; while :; do sleep 1; done";
// The exec task puts a loader variable into its own process's environment, where exec reads it.
const PLANT = `LD_PRELOAD=/berth-no-such-preload.so exec /bin/sh -c '${RECORD}'`;
const SERVICE = `job "boxed" {
  group "g" {
    task "box" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(PLANT)}]
      }
      resources {
        memory = 64
      }
    }
    task "raw" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(RECORD)}]
      }
      resources {
        memory = 64
      }
    }
  }
}
`;
const BATCH = `job "once" {
  type = "batch"
  group "g" {
    task "say" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo said-on-stdout; echo said-on-stderr >&2"]
      }
    }
  }
}
`;
// Doubles a string 27 times (128 MiB, more while copying), then says it survived.
const HOG = 'a=x; i=0; while [ $i -lt 27 ]; do a="$a$a"; i=$((i+1)); done; echo survived';

/** The agent, on the same data dir and port each time. */
async function startAgent(): Promise<void> {
  const addr = `http://127.0.0.1:${port}`;
  env = { NOMAD_ADDR: addr, BERTH_ADDR: "" };
  agent = new AgentProcess(
    ["-server", "-client", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-execlogs-")));
  logFile = path.join(dir, "agent.log");
  port = await freePort();
  await startAgent();
});

after(async () => {
  try {
    // The agent leaves its tasks running when it stops: stop them first.
    await runCli(["job", "stop", "boxed"], env);
    await eventually("the boxed tasks to end", async () => {
      const allocs = await getJson<{ ClientStatus: string }[]>(env.NOMAD_ADDR!, "/v1/allocations");
      return allocs.every((a) => a.ClientStatus !== "running") ? true : undefined;
    });
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
  return runCli(args, env);
}

async function allocOf(job: string, status: string): Promise<string> {
  return eventually(`a ${status} ${job} alloc`, async () => {
    const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(
      env.NOMAD_ADDR!,
      `/v1/job/${job}/allocations`,
    );
    return allocs.find((a) => a.ClientStatus === status)?.ID;
  });
}

/** What the task printed of its cgroups (RECORD), once it has. */
async function taskCgroups(id: string, task: string): Promise<string> {
  return eventually(`task ${task} to print its cgroups`, async () => {
    const r = await cli("alloc", "logs", id, task);
    const i = r.stdout.indexOf("===\n");
    return i > 0 ? r.stdout.slice(0, i) : undefined;
  });
}

async function assertExecInCgroup(id: string, task: string): Promise<void> {
  const own = await taskCgroups(id, task);
  assert.match(own, /\/berth\/[0-9a-f-]+\.(box|raw)(\.scope)?$/m, "the task has a cgroup of its own");
  const session = await cli("alloc", "exec", "-task", task, id, "/bin/cat", "/proc/self/cgroup");
  assert.equal(session.code, 0, session.stderr);
  assert.equal(session.stdout, own, `the ${task} exec session is in the task's cgroups`);
  const hog = await cli("alloc", "exec", "-task", task, id, "/bin/sh", "-c", HOG);
  assert.doesNotMatch(hog.stdout, /survived/, `the ${task} session ran past its task's 64 MiB`);
  assert.equal(hog.code, 137, `the ${task} session was OOM-killed: ${JSON.stringify(hog)}`);
}

test("alloc exec runs in the task's cgroup (exec and raw_exec), also after an agent restart; alloc logs of an alloc finished before the restart", async () => {
  fs.writeFileSync(path.join(dir, "boxed.hcl"), SERVICE);
  fs.writeFileSync(path.join(dir, "once.hcl"), BATCH);
  assert.equal((await cli("job", "run", path.join(dir, "boxed.hcl"))).code, 0);
  assert.equal((await cli("job", "run", path.join(dir, "once.hcl"))).code, 0);
  const boxed = await allocOf("boxed", "running");
  for (const t of ["box", "raw"]) await assertExecInCgroup(boxed, t);
  // The loader variable the task planted reaches the command, but none of the root helpers on the
  // way (the gate's shell, nsenter): only the command's own loader complains of the missing library.
  const env = await cli("alloc", "exec", "-task", "box", boxed, "/bin/sh", "-c", 'echo "$LD_PRELOAD"');
  assert.equal(env.stdout, "/berth-no-such-preload.so\n");
  assert.equal(env.stderr.match(/cannot be preloaded/g)?.length, 1, env.stderr);
  const done = await allocOf("once", "complete");
  assert.equal((await cli("alloc", "logs", done)).stdout, "said-on-stdout\n");

  // SIGTERM, and the same data dir again.
  agent.child.kill("SIGTERM");
  const [code] = (await once(agent.child, "exit")) as [number | null];
  assert.equal(code, 0, "the agent stopped cleanly on SIGTERM");
  await startAgent();
  await eventually("the boxed alloc to be running again", async () =>
    (await allocOf("boxed", "running")) === boxed ? true : undefined,
  );

  const out = await cli("alloc", "logs", done);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, "said-on-stdout\n");
  const err = await cli("alloc", "logs", "-stderr", done, "say");
  assert.equal(err.stdout, "said-on-stderr\n");
  const tail = await cli("alloc", "logs", "-tail", "-n", "1", done);
  assert.equal(tail.stdout, "said-on-stdout\n");
  // -f on a finished alloc prints what there is and ends (runCli's timeout would fail it); -f
  // alone follows both files from their end (as Nomad's), so it has nothing to print and ends.
  const follow = await cli("alloc", "logs", "-stdout", "-f", done);
  assert.equal(follow.code, 0, follow.stderr);
  assert.equal(follow.stdout, "said-on-stdout\n");
  const both = await cli("alloc", "logs", "-f", done);
  assert.deepEqual([both.code, both.stdout, both.stderr], [0, "", ""]);

  // The recovered tasks: exec sessions still join their cgroups.
  for (const t of ["box", "raw"]) await assertExecInCgroup(boxed, t);
  failed = false;
});
