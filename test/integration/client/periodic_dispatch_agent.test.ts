/**
 * Issue 29 (periodic and dispatch) through a real `berth agent -dev`, the real CLI and real exec
 * tasks. Nomad's cron parser takes 7 fields with seconds, so the schedules here tick every two
 * seconds instead of every minute:
 * - a periodic job launches nothing at submit (`job run` prints Nomad's "Approximate next launch
 *   time"), then one child per tick, each named `<id>/periodic-<tick>`, no tick missed;
 * - with prohibit_overlap, a tick is skipped while the previous child still runs (children 5 s
 *   long are launched at least 6 s apart);
 * - `job periodic force` launches one now;
 * - `job dispatch -meta who=alice render <file>` runs a child whose task reads the payload from its
 *   `dispatch_payload` file; a dispatch missing required meta is refused, naming the keys;
 * - the parents are "running" with no allocs; `job status` lists the children.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  findFiles,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let failed = true;
let env: Record<string, string>;

const periodicJob = (id: string, overlap: boolean, script: string) => `job "${id}" {
  type = "batch"
  periodic {
    crons            = ["*/2 * * * * * *"]
    prohibit_overlap = ${overlap}
  }
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
    }
  }
}
`;

const RENDER = `job "render" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["who"]
    meta_optional = ["tone"]
  }
  group "g" {
    task "work" {
      driver = "exec"
      dispatch_payload {
        file = "in/input.txt"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "echo payload: $(cat $NOMAD_TASK_DIR/in/input.txt); echo meta: $NOMAD_META_who $NOMAD_META_WHO [$NOMAD_META_tone] parent: $NOMAD_JOB_PARENT_ID"]
      }
    }
  }
}
`;

interface Stub {
  ID: string;
  ParentID?: string;
  Status: string;
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-periodic-")));
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
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
    for (const id of ["tick", "slow", "render"]) await runCli(["job", "stop", "-purge", id], env);
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 120)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

async function children(parent: string): Promise<Stub[]> {
  const jobs = await getJson<Stub[]>(addr, `/v1/jobs?prefix=${encodeURIComponent(parent + "/")}`);
  return jobs.filter((j) => j.ParentID === parent);
}

const tickOf = (id: string) => Number(/\/periodic-(\d+)$/.exec(id)?.[1]);

async function run(file: string, text: string) {
  const p = path.join(dir, file);
  fs.writeFileSync(p, text);
  const r = await runCli(["job", "run", p], env);
  assert.equal(r.code, 0, r.stderr);
  return r;
}

test("a periodic job launches nothing at submit, then one child per tick", async () => {
  const r = await run("tick.hcl", periodicJob("tick", false, "true"));
  assert.match(r.stdout, /Job registration successful/);
  assert.match(r.stdout, /Approximate next launch time: \S+Z \(\d+s from now\)/);
  assert.doesNotMatch(r.stdout, /Evaluation ID/);
  assert.doesNotMatch(r.stdout, /periodic/i, "no warning about periodic jobs");
  assert.deepEqual(
    await getJson<unknown[]>(addr, "/v1/job/tick/allocations"),
    [],
    "the parent places nothing",
  );
  const first = await eventually(
    "a first child",
    async () => {
      const c = await children("tick");
      return c.length > 0 ? c : undefined;
    },
    15_000,
    100,
  );
  assert.equal(first.length, 1, "one child at the first tick");
  const launched = await eventually(
    "four children",
    async () => {
      const c = await children("tick");
      return c.length >= 4 ? c : undefined;
    },
    30_000,
    200,
  );
  const ticks = launched.map((c) => tickOf(c.ID)).sort((a, b) => a - b);
  for (const t of ticks) assert.equal(t % 2, 0, `child at ${t} is on a tick`);
  for (let i = 1; i < ticks.length; i++)
    assert.equal(ticks[i]! - ticks[i - 1]!, 2, `no tick missed or doubled: ${ticks.join(",")}`);
  const parent = await getJson<{ Status: string }>(addr, "/v1/job/tick");
  assert.equal(parent.Status, "running");
  const status = await runCli(["job", "status", "tick"], env);
  assert.match(status.stdout, /Periodic\s+= true/);
  assert.match(status.stdout, /Previously Launched Jobs/);
  assert.match(status.stdout, new RegExp(`tick/periodic-${ticks[0]}`));
  // Force: one more child now, off the schedule.
  await runCli(["job", "stop", "tick"], env);
  assert.equal((await getJson<{ Status: string }>(addr, "/v1/job/tick")).Status, "dead");
  const forced = await runCli(["job", "periodic", "force", "-detach", "tick"], env);
  assert.notEqual(forced.code, 0, "a stopped periodic job is not tracked: nothing to force");
});

test("prohibit_overlap skips ticks while a child runs; force launches anyway", async () => {
  await run("slow.hcl", periodicJob("slow", true, "sleep 5"));
  const launched = await eventually(
    "three children",
    async () => {
      const c = await children("slow");
      return c.length >= 3 ? c : undefined;
    },
    40_000,
    200,
  );
  const ticks = launched.map((c) => tickOf(c.ID)).sort((a, b) => a - b);
  for (let i = 1; i < ticks.length; i++)
    assert.ok(
      ticks[i]! - ticks[i - 1]! >= 6,
      `children 5 s long launched at least 6 s apart: ${ticks.join(",")}`,
    );
  assert.match(
    fs.readFileSync(logFile, "utf8"),
    /skipping launch of periodic job because job prohibits overlap/,
  );
  const before = (await children("slow")).length;
  const forced = await runCli(["job", "periodic", "force", "-detach", "slow"], env);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /Force periodic successful\nEvaluation ID: \S+/);
  assert.ok((await children("slow")).length > before, "force launched a child");
});

test("job dispatch runs a child with its meta whose task reads the payload file", async () => {
  const r = await run("render.hcl", RENDER);
  assert.doesNotMatch(r.stdout, /Evaluation ID|dispatch/i);
  assert.equal((await getJson<{ Status: string }>(addr, "/v1/job/render")).Status, "running");
  const input = path.join(dir, "input.txt");
  fs.writeFileSync(input, "hello from the payload");
  const missing = await runCli(["job", "dispatch", "-detach", "render", input], env);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /Meta: Dispatch did not provide required meta keys: \[who\]/);
  const d = await runCli(["job", "dispatch", "-detach", "-meta", "who=alice", "render", input], env);
  assert.equal(d.code, 0, d.stderr);
  const id = /Dispatched Job ID = (\S+)/.exec(d.stdout)?.[1];
  assert.match(id ?? "", /^render\/dispatch-\d+-[0-9a-f]{8}$/);
  const child = await getJson<{ Meta: Record<string, string>; ParentID: string; Dispatched: boolean }>(
    addr,
    `/v1/job/${encodeURIComponent(id!)}`,
  );
  assert.equal(child.ParentID, "render");
  assert.equal(child.Dispatched, true);
  assert.equal(child.Meta.who, "alice");
  const out = await eventually(
    "the task's output",
    async () => {
      const files = findFiles(path.join(dir, "data"), "work.stdout.0");
      const text = files.map((f) => fs.readFileSync(f, "utf8")).join("");
      return text.includes("parent:") ? text : undefined;
    },
    30_000,
    200,
  );
  assert.match(out, /payload: hello from the payload/);
  // NOMAD_META_<key> as written and upper-cased; an optional key not given is set, empty.
  assert.match(out, /meta: alice alice \[\] parent: render\n/);
  // A dispatch retried with its idempotency token gets the first one's child, not a second run.
  const tokened = async () => {
    const r = await runCli(
      ["job", "dispatch", "-detach", "-idempotency-token", "req-7", "-meta", "who=bob", "render", input],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    return /Dispatched Job ID = (\S+)/.exec(r.stdout)?.[1];
  };
  const firstTry = await tokened();
  const retry = await tokened();
  assert.equal(retry, firstTry);
  const kids = await getJson<{ ID: string; ParentID?: string }[]>(addr, "/v1/jobs?prefix=render%2F");
  assert.equal(
    kids.filter((k) => k.ParentID === "render").length,
    2,
    "the first dispatch and one tokened child",
  );
  const long = await fetch(`${addr}/v1/job/render/dispatch`, {
    method: "PUT",
    body: JSON.stringify({ Meta: { who: "x" }, Payload: "eA==", IdempotencyToken: "t".repeat(300) }),
  });
  assert.equal(long.status, 400);
  assert.match(await long.text(), /IdempotencyToken/);
  const status = await runCli(["job", "status", "render"], env);
  assert.match(status.stdout, /Dispatched Jobs/);
  assert.ok(status.stdout.includes(id!));
  failed = false;
});
