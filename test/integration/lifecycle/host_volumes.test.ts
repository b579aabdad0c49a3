/**
 * Host volumes end to end with a real `berth agent -dev` and real exec tasks: host volumes from
 * flags and from a config file are fingerprinted on the node; a job mounts one read-write and its
 * file shows up in the host path; a job naming a missing host volume, or asking read-write of a
 * read-only one, fails placement with Nomad's reason; a read-only mount refuses writes; a missing
 * path stops the agent at start with a clear error. Ends asserting nothing is mounted or running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
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
let dataDir: string;
let rwDir: string;
let roDir: string;
let cfgDir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let failed = true;

interface NodeView {
  ID: string;
  HostVolumes?: Record<string, { Name: string; Path: string; ReadOnly: boolean }>;
  Meta?: Record<string, string>;
  Attributes?: Record<string, string>;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-hostvol-"));
  dataDir = path.join(dir, "data");
  rwDir = path.join(dir, "rw");
  roDir = path.join(dir, "ro");
  cfgDir = path.join(dir, "cfg");
  for (const d of [rwDir, roDir, cfgDir]) fs.mkdirSync(d);
  // The operator opens the writable host volume to the tasks' user: exec tasks run as nobody.
  fs.chmodSync(rwDir, 0o777);
  fs.writeFileSync(path.join(roDir, "seed.txt"), "seed\n");
  const config = path.join(dir, "agent.hcl");
  fs.writeFileSync(
    config,
    `client {\n  host_volume "cfg" {\n    path = "${cfgDir}"\n  }\n  meta {\n    rack = "r1"\n  }\n}\n`,
  );
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  agent = new AgentProcess(
    [
      "-dev",
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
      "-config",
      config,
      `-host-volume=rw:${rwDir}`,
      `-host-volume=ro:${roDir}:ro`,
    ],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  const code = await agent?.stop(90_000);
  killProcessGroupsUnder(dir);
  if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
  const left = await mountsUnder(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(code, 0, "the agent stopped cleanly");
  assert.deepEqual(left, [], "nothing is left mounted");
});

function job(
  id: string,
  volume: string,
  opts: { readOnly?: boolean; script: string; rack?: string },
): string {
  return `job "${id}" {
  type = "batch"
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  constraint {
    attribute = "\${meta.rack}"
    value     = "${opts.rack ?? "r1"}"
  }
  group "g" {
    volume "data" {
      type      = "host"
      source    = "${volume}"
      read_only = ${opts.readOnly ?? false}
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(opts.script)}]
      }
      volume_mount {
        volume      = "data"
        destination = "/vol-\${meta.rack}"
      }
      restart {
        attempts = 0
        mode     = "fail"
      }
    }
  }
}
`;
}

/** `job run`, monitored: exit 0, or 2 (Nomad's) when `placeable` is false and allocs found no node. */
async function run(id: string, hcl: string, placeable = true): Promise<void> {
  const file = path.join(dir, `${id}.hcl`);
  fs.writeFileSync(file, hcl);
  const r = await runCli(["job", "run", file], { BERTH_ADDR: addr }, 60_000, { monitor: true });
  assert.equal(r.code, placeable ? 0 : 2, r.stderr + r.stdout);
  if (!placeable)
    assert.match(r.stdout, /finished with status "complete" but failed to place all allocations/);
}

async function finalStatus(id: string): Promise<{ status: string; events: string[] }> {
  return eventually(`job ${id}'s alloc to finish`, async () => {
    const allocs = await getJson<
      {
        ClientStatus: string;
        TaskStates?: Record<string, { Events: { Type: string; DisplayMessage: string }[] }>;
      }[]
    >(addr, `/v1/job/${id}/allocations`);
    const a = allocs[0];
    if (!a || !["complete", "failed"].includes(a.ClientStatus)) return undefined;
    const events = Object.values(a.TaskStates ?? {}).flatMap((t) =>
      t.Events.map((e) => `${e.Type}: ${e.DisplayMessage}`),
    );
    return { status: a.ClientStatus, events };
  });
}

async function placementFailure(id: string): Promise<Record<string, number>> {
  return eventually(`job ${id}'s placement failure`, async () => {
    const evals = await getJson<
      { FailedTGAllocs?: Record<string, { ConstraintFiltered?: Record<string, number> }> }[]
    >(addr, `/v1/job/${id}/evaluations`);
    return evals.map((e) => e.FailedTGAllocs?.g?.ConstraintFiltered).find((c) => c !== undefined);
  });
}

test("host volumes from flags and the config file are on the node, with meta and attributes", async () => {
  const [stub] = await getJson<NodeView[]>(addr, "/v1/nodes");
  const node = await getJson<NodeView>(addr, `/v1/node/${stub!.ID}`);
  assert.deepEqual(node.HostVolumes, {
    cfg: { Name: "cfg", Path: cfgDir, ReadOnly: false },
    rw: { Name: "rw", Path: rwDir, ReadOnly: false },
    ro: { Name: "ro", Path: roDir, ReadOnly: true },
  });
  assert.deepEqual(node.Meta, { rack: "r1" });
  assert.equal(node.Attributes?.["kernel.name"], "linux");
  const status = await runCli(["node", "status", "-verbose", stub!.ID], { BERTH_ADDR: addr });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /Host Volumes\nName +ReadOnly +Source\ncfg +false/);
  assert.match(status.stdout, new RegExp(`ro +true +${roDir}`));
});

test("an exec task writes through a read-write host volume into the host path", async () => {
  await run("writer", job("writer", "rw", { script: "echo hello > /vol-r1/hello.txt" }));
  const res = await finalStatus("writer");
  assert.equal(res.status, "complete", res.events.join("\n"));
  assert.equal(fs.readFileSync(path.join(rwDir, "hello.txt"), "utf8"), "hello\n");
});

test("a read-only host volume mount refuses writes and still shows the host's files", async () => {
  const script = "cat /vol-r1/seed.txt > /alloc/seen && if touch /vol-r1/new.txt; then exit 7; fi";
  await run("reader", job("reader", "ro", { readOnly: true, script }));
  const res = await finalStatus("reader");
  assert.equal(res.status, "complete", res.events.join("\n"));
  assert.equal(fs.existsSync(path.join(roDir, "new.txt")), false, "nothing was written");
  // read_only on the request alone makes the mount read-only on a writable host volume too.
  await run(
    "reader2",
    job("reader2", "rw", { readOnly: true, script: "if touch /vol-r1/x; then exit 7; fi" }),
  );
  const res2 = await finalStatus("reader2");
  assert.equal(res2.status, "complete", res2.events.join("\n"));
  assert.equal(fs.existsSync(path.join(rwDir, "x")), false);
});

test("placement: a missing host volume, or read-write on a read-only one, is infeasible", async () => {
  await run("missing", job("missing", "nope", { script: "true" }), false);
  assert.deepEqual(await placementFailure("missing"), { "missing compatible host volumes": 1 });
  await run("rw-on-ro", job("rw-on-ro", "ro", { script: "true" }), false);
  assert.deepEqual(await placementFailure("rw-on-ro"), { "missing compatible host volumes": 1 });
  await run("other-rack", job("other-rack", "rw", { script: "true", rack: "r2" }), false);
  assert.deepEqual(await placementFailure("other-rack"), { "${meta.rack} = r2": 1 });
  const allocs = await getJson<unknown[]>(addr, "/v1/job/missing/allocations");
  assert.deepEqual(allocs, [], "nothing was placed");
  failed = false;
});

test("an agent whose host volume path does not exist or is a file refuses to start", async () => {
  for (const [p, why] of [
    [path.join(dir, "absent"), "does not exist"],
    [path.join(roDir, "seed.txt"), "is not a directory"],
  ] as const) {
    const bad = new AgentProcess(
      [
        "-dev",
        "-data-dir",
        path.join(dir, "bad"),
        "-http-addr",
        `127.0.0.1:${await freePort()}`,
        `-host-volume=x:${p}`,
      ],
      path.join(dir, "bad.log"),
    );
    const code = await new Promise<number | null>((resolve) => bad.child.once("exit", resolve));
    assert.equal(code, 1);
    const log = fs.readFileSync(path.join(dir, "bad.log"), "utf8");
    assert.doesNotMatch(log, /server started/, "nothing started before the check");
    assert.match(
      fs.readFileSync(path.join(dir, "bad.log"), "utf8"),
      new RegExp(`host volume \\\\"x\\\\": path \\\\"${p}\\\\" ${why}`),
    );
  }
});
