/**
 * The README's quick start, end to end, through the CLI against a real `berth agent -dev`:
 * plugin job → plugin healthy → volume created → writer job completes → hello.txt in the plugin's
 * storage → job stop -purge → no claims → volume delete removes the storage → agent stops cleanly →
 * nothing mounted under the data dir.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/client/allocdir/alloc_dir.js";
import {
  AgentProcess,
  eventually,
  findFiles,
  freePort,
  killProcessesUnder,
  runCli,
} from "../helpers/agent_process.js";

let dataDir: string;
let agent: AgentProcess;
let env: Record<string, string>;
let logFile: string;
let quickStartPassed = false;

async function cliJson<T>(args: string[]): Promise<T> {
  const r = await runCli([...args.slice(0, 2), "-json", ...args.slice(2)], env);
  if (r.code !== 0) throw new Error(`berth ${args.join(" ")}: exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function cli(args: string[]) {
  const r = await runCli(args, env);
  assert.equal(r.code, 0, `berth ${args.join(" ")} failed: ${r.stderr}\n${r.stdout}`);
  return r;
}

interface AllocStub {
  ID: string;
  ClientStatus: string;
  TaskStates: Record<string, { Events: { Type: string; DisplayMessage: string }[] }>;
}

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-"));
  logFile = path.join(os.tmpdir(), `berth-e2e-agent-${process.pid}.log`);
  const port = await freePort();
  env = { BERTH_ADDR: `http://127.0.0.1:${port}` };
  agent = new AgentProcess(["-dev", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`], logFile);
  await eventually(
    "the dev node to be ready",
    async () => {
      const nodes = await cliJson<{ Status: string }[]>(["node", "status"]);
      return nodes.some((n) => n.Status === "ready") ? true : undefined;
    },
    30_000,
  );
});

after(async () => {
  agent?.kill();
  // Leave nothing behind even when an assertion failed half-way: tasks, mounts, files.
  const leftovers = killProcessesUnder(dataDir);
  if (leftovers.length > 0 || !quickStartPassed) {
    process.stderr.write(
      `agent log (last 80 lines):\n${fs.readFileSync(logFile, "utf8").split("\n").slice(-80).join("\n")}\n`,
    );
  }
  for (const m of await mountsUnder(dataDir)) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(logFile, { force: true });
});

function describeAllocs(allocs: AllocStub[]): string {
  return JSON.stringify(
    allocs.map((a) => ({
      id: a.ID,
      status: a.ClientStatus,
      events: Object.values(a.TaskStates ?? {}).flatMap((t) =>
        t.Events.map((e) => `${e.Type}: ${e.DisplayMessage}`),
      ),
    })),
  );
}

test("bad volume specs are refused through the CLI with the field named, and change nothing", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-specs-"));
  const cap = 'capability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n';
  const cases: [string, string, RegExp][] = [
    ["missing-id", `type = "csi"\nplugin_id = "hostpath"\n${cap}`, /ID: is required/],
    ["missing-plugin", `id = "v1"\ntype = "csi"\n${cap}`, /PluginID: is required/],
    ["missing-capability", `id = "v1"\ntype = "csi"\nplugin_id = "hostpath"\n`, /RequestedCapabilities/],
    [
      "unknown-access-mode",
      `id = "v1"\ntype = "csi"\nplugin_id = "hostpath"\n${cap.replace("single-node-writer", "everyone")}`,
      /AccessMode: unknown access mode "everyone"/,
    ],
    [
      "escaping-id",
      `id = "../../etc"\ntype = "csi"\nplugin_id = "hostpath"\n${cap}`,
      /ID: "\.\.\/\.\.\/etc" is not a valid ID/,
    ],
  ];
  try {
    for (const [name, body, expected] of cases) {
      const file = path.join(dir, `${name}.hcl`);
      fs.writeFileSync(file, body);
      for (const verb of ["create", "register"]) {
        const r = await runCli(["volume", verb, file], env);
        assert.equal(r.code, 1, `${verb} ${name} must fail`);
        if (verb === "create") assert.match(r.stderr, expected, `${verb} ${name}: ${r.stderr}`);
        assert.match(r.stderr, /\b400\b/, `${verb} ${name} is a 4xx: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
      }
    }
    assert.deepEqual(await cliJson<unknown[]>(["volume", "status"]), [], "nothing was registered");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(
  "quick start: plugin, volume, writer job, release, delete, clean stop",
  { timeout: 240_000 },
  async () => {
    await cli(["job", "run", "examples/hostpath/plugin.hcl"]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const p = await cliJson<{ NodesHealthy: number; ControllersHealthy: number }>([
          "plugin",
          "status",
          "hostpath",
        ]).catch(() => undefined);
        return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
      },
      90_000,
    );

    await cli(["volume", "create", "examples/hostpath/volume.hcl"]);
    const created = await cliJson<{ ID: string; ExternalID: string; Schedulable: boolean }>([
      "volume",
      "status",
      "demo",
    ]);
    assert.equal(created.ID, "demo");
    assert.ok(created.ExternalID, "the plugin gave the volume an external ID");

    await cli(["job", "run", "examples/hostpath/job.hcl"]);
    const done = await eventually(
      "the writer alloc to finish",
      async () => {
        const res = await fetch(`${env.BERTH_ADDR}/v1/job/writer/allocations`);
        if (!res.ok) return undefined;
        const allocs = (await res.json()) as AllocStub[];
        if (allocs.length === 0) return undefined;
        if (allocs.some((a) => a.ClientStatus === "failed")) {
          throw new Error(`writer failed: ${describeAllocs(allocs)}`);
        }
        return allocs.every((a) => a.ClientStatus === "complete") ? allocs : undefined;
      },
      120_000,
    );
    assert.equal(done.length, 1);

    const hellos = findFiles(path.join(dataDir, "alloc"), "hello.txt").filter((f) => f.includes("hostpath"));
    assert.ok(hellos.length >= 1, "hello.txt exists in the plugin's storage");
    assert.equal(fs.readFileSync(hellos[0]!, "utf8").trim(), "hello");

    await cli(["job", "stop", "-purge", "writer"]);
    const released = await eventually(
      "the writer's claim to be released",
      async () => {
        const v = await cliJson<{
          ReadAllocs: Record<string, unknown>;
          WriteAllocs: Record<string, unknown>;
          ReadClaims: Record<string, unknown>;
          WriteClaims: Record<string, unknown>;
          PastClaims: Record<string, unknown>;
        }>(["volume", "status", "demo"]);
        const claims = [v.ReadAllocs, v.WriteAllocs, v.ReadClaims, v.WriteClaims, v.PastClaims];
        return claims.every((c) => Object.keys(c ?? {}).length === 0) ? v : undefined;
      },
      60_000,
    );
    assert.ok(released);

    const storageDirs = hellos.map((f) => path.dirname(f));
    await cli(["volume", "delete", "demo"]);
    for (const d of storageDirs) assert.equal(fs.existsSync(d), false, `${d} removed by DeleteVolume`);
    const vols = await cliJson<unknown[]>(["volume", "status"]);
    assert.equal(vols.length, 0);

    const code = await agent.stop(90_000);
    assert.equal(code, 0, `agent exit code (log: ${logFile})`);
    assert.deepEqual(await mountsUnder(dataDir), [], "nothing is mounted under the data dir");
    assert.deepEqual(killProcessesUnder(dataDir), [], "no task process outlived the agent");
    quickStartPassed = true;
  },
);
