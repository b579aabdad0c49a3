/**
 * "Root for anyone", the issue's first reproduction, against a real `berth agent` on loopback with
 * ACLs off and the node's defaults: the unprivileged user `nobody` submits jobs with the real CLI
 * and cannot get a root task. A raw_exec job is not placed (the driver is disabled); an exec job
 * that asks for `user = "root"` fails before it starts (the node's user denylist); an exec job that
 * names no user runs as nobody and cannot read /etc/shadow.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import {
  AgentProcess,
  BERTH_BIN,
  eventually,
  freePort,
  getJson,
  killProcessesUnder,
  logTail,
  REPO_ROOT,
} from "../helpers/agent_process.js";

interface AllocStub {
  ID: string;
  JobID: string;
  ClientStatus: string;
  TaskStates?: Record<
    string,
    { Events: { Type: string; DisplayMessage?: string; Details?: Record<string, string> }[] }
  >;
}

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
const nobody = {
  uid: Number(execFileSync("id", ["-u", "nobody"]).toString()),
  gid: Number(execFileSync("id", ["-g", "nobody"]).toString()),
};

/**
 * The repo as nobody can reach it: a read-only bind of REPO_ROOT under the test's dir. A clone
 * inside a directory only root can enter (root's home is 0700 on Debian) is out of nobody's reach at
 * its own path, though its files are world-readable.
 */
let repoView: string;

/** `berth job run -detach FILE` as the user nobody; the answer's exit code and output. */
function runAsNobody(file: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const bin = path.join(repoView, path.relative(REPO_ROOT, BERTH_BIN));
    const child = spawn(process.execPath, [bin, "job", "run", "-detach", file], {
      cwd: repoView,
      uid: nobody.uid,
      gid: nobody.gid,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, NOMAD_ADDR: addr },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

function jobFile(name: string, driver: string, user: string | null): string {
  const file = path.join(dir, `${name}.hcl`);
  fs.writeFileSync(
    file,
    `job "${name}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "${driver}"
${user === null ? "" : `      user   = "${user}"\n`}      config {
        command = "/bin/sh"
        args    = ["-c", "id -u; if cat /etc/shadow > /dev/null 2>&1; then echo shadow-read; else echo shadow-refused; fi"]
      }
    }
  }
}
`,
    { mode: 0o644 },
  );
  return file;
}

async function allocOf(job: string, until: (a: AllocStub) => boolean): Promise<AllocStub> {
  return eventually(`an alloc of ${job}`, async () => {
    const allocs = await getJson<AllocStub[]>(addr, `/v1/job/${job}/allocations`);
    const a = allocs[0];
    if (!a || !until(a)) return undefined;
    return getJson<AllocStub>(addr, `/v1/allocation/${a.ID}`);
  });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-exec-user-"));
  fs.chmodSync(dir, 0o755);
  repoView = path.join(dir, "repo");
  fs.mkdirSync(repoView);
  execFileSync("mount", ["--bind", REPO_ROOT, repoView]);
  execFileSync("mount", ["-o", "remount,bind,ro", repoView]);
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  // Not -dev (which enables raw_exec, as Nomad's): a node with Nomad's defaults.
  agent = new AgentProcess(
    ["-server", "-client", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
    {},
    { rawExec: false },
  );
  await eventually("the node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes").catch(() => []);
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  try {
    await agent?.stop(60_000);
  } finally {
    if (repoView) execFileSync("umount", ["-l", repoView], { stdio: "ignore" });
    const left = await mountsUnder(dir);
    const strays = killProcessesUnder(dir);
    for (const m of left) execFileSync("umount", ["-l", m]);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(left, [], "nothing may stay mounted");
    assert.deepEqual(strays, [], "no process may outlive the agent");
  }
});

test("nobody's raw_exec job is not placed: the driver is disabled on the node", async () => {
  const r = await runAsNobody(jobFile("raw", "raw_exec", null));
  assert.equal(r.code, 0, r.out);
  const evals = await eventually("the job's eval to finish", async () => {
    const list = await getJson<{ Status: string; FailedTGAllocs?: Record<string, unknown> }[]>(
      addr,
      "/v1/job/raw/evaluations",
    );
    return list.some((e) => e.Status === "complete") ? list : undefined;
  });
  assert.ok(
    evals.some((e) => e.FailedTGAllocs?.g),
    `the group is reported unplaceable: ${JSON.stringify(evals)}`,
  );
  assert.deepEqual(await getJson<AllocStub[]>(addr, "/v1/job/raw/allocations"), []);
});

test('nobody\'s exec job with user = "root" fails before it starts', async () => {
  const r = await runAsNobody(jobFile("asroot", "exec", "root"));
  assert.equal(r.code, 0, r.out);
  const a = await allocOf("asroot", (x) => x.ClientStatus === "failed");
  const events = a.TaskStates?.t?.Events ?? [];
  const said = JSON.stringify(events);
  assert.match(said, /running as user \\"root\\" is disallowed/, said);
  assert.equal(
    events.some((e) => e.Type === "Started"),
    false,
    said,
  );
});

test("nobody's exec job with no user runs as nobody and cannot read /etc/shadow", async () => {
  const r = await runAsNobody(jobFile("plain", "exec", null));
  assert.equal(r.code, 0, r.out);
  const a = await allocOf("plain", (x) => x.ClientStatus === "complete" || x.ClientStatus === "failed");
  assert.equal(a.ClientStatus, "complete", `${JSON.stringify(a.TaskStates)}\n${logTail(logFile)}`);
  const res = await fetch(
    `${addr}/v1/client/fs/logs/${a.ID}?task=t&type=stdout&plain=true&origin=start&offset=0`,
  );
  const out = await res.text();
  assert.equal(res.status, 200, out);
  assert.deepEqual(out.trim().split("\n"), [String(nobody.uid), "shadow-refused"]);
});
