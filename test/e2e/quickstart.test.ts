/**
 * The README's quick start, end to end, through the CLI against a real
 * `berth agent -dev -config examples/hostpath/agent.hcl`: plugin job → plugin healthy → volume
 * created → writer job completes → hello.txt in the plugin's storage, which is the node's
 * "hostpath-data" host volume → job stop -purge → no claims → the plugin job is purged and run
 * again → a reader job reads hello.txt through the new plugin → volume delete removes the storage
 * → agent stops cleanly → nothing mounted under the data dir.
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
  findFiles,
  killProcessGroupsUnder,
  killProcessesUnder,
  runCli,
  startExampleDevAgent,
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

/** The README's commands as written: `job run` monitors the evaluation and deployment, as in Nomad. */
async function cli(args: string[]) {
  const r = await runCli(args, env, 120_000, { monitor: true });
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
  const started = await startExampleDevAgent(dataDir, logFile);
  agent = started.agent;
  env = { BERTH_ADDR: started.addr };
});

after(async () => {
  agent?.kill();
  // Leave nothing behind even when an assertion failed half-way: tasks, mounts, files.
  // By process group (a chrooted task's command line does not name the data dir), then any
  // process still rooted in it.
  const leftovers = [...killProcessGroupsUnder(dataDir), ...pluginProcesses()];
  for (const pid of pluginProcesses()) process.kill(pid, "SIGKILL");
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

/** Pids of csi-hostpath processes chrooted into this agent's data dir (its task dirs). */
function pluginProcesses(): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const root = fs.readlinkSync(`/proc/${pid}/root`);
      if (cmd.includes("csi-hostpath") && root.startsWith(dataDir)) out.push(pid);
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

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

interface PluginView {
  NodesHealthy: number;
  ControllersHealthy: number;
}

async function waitPluginHealthy(): Promise<void> {
  await eventually(
    "plugin hostpath to be healthy",
    async () => {
      const p = await cliJson<PluginView>(["plugin", "status", "hostpath"]).catch(() => undefined);
      return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
    },
    90_000,
  );
}

/** Waits for the job's only alloc to complete; throws with its events when it fails. */
async function waitComplete(job: string): Promise<AllocStub[]> {
  return eventually(
    `the ${job} alloc to finish`,
    async () => {
      const res = await fetch(`${env.BERTH_ADDR}/v1/job/${job}/allocations`);
      if (!res.ok) return undefined;
      const allocs = (await res.json()) as AllocStub[];
      if (allocs.length === 0) return undefined;
      if (allocs.some((a) => a.ClientStatus === "failed")) {
        throw new Error(`${job} failed: ${describeAllocs(allocs)}`);
      }
      return allocs.every((a) => a.ClientStatus === "complete") ? allocs : undefined;
    },
    120_000,
  );
}

async function waitReleased(): Promise<void> {
  await eventually(
    "the volume's claims to be released",
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
    await waitPluginHealthy();

    await cli(["volume", "create", "examples/hostpath/volume.hcl"]);
    const created = await cliJson<{ ID: string; ExternalID: string; Schedulable: boolean }>([
      "volume",
      "status",
      "demo",
    ]);
    assert.equal(created.ID, "demo");
    assert.ok(created.ExternalID, "the plugin gave the volume an external ID");

    await cli(["job", "run", "examples/hostpath/job.hcl"]);
    assert.equal((await waitComplete("writer")).length, 1);

    // The plugin's storage is the host volume, outside every alloc dir.
    const storage = path.join(dataDir, "hostpath-data");
    const hellos = findFiles(storage, "hello.txt");
    assert.equal(hellos.length, 1, "hello.txt is in the hostpath-data host volume");
    assert.equal(fs.readFileSync(hellos[0]!, "utf8").trim(), "hello");
    assert.deepEqual(findFiles(path.join(dataDir, "alloc"), "hello.txt"), [], "nothing in alloc dirs");

    await cli(["job", "stop", "-purge", "writer"]);
    await waitReleased();

    // The plugin job goes away entirely and comes back: the volume's data is still there.
    await cli(["job", "stop", "-purge", "plugin"]);
    await eventually("the plugin alloc to stop", async () => {
      const res = await fetch(`${env.BERTH_ADDR}/v1/job/plugin/allocations`);
      return res.status === 404 || ((await res.json()) as unknown[]).length === 0 ? true : undefined;
    });
    await eventually("the plugin's processes to be gone", async () =>
      pluginProcesses().length === 0 ? true : undefined,
    );
    await cli(["job", "run", "examples/hostpath/plugin.hcl"]);
    await waitPluginHealthy();
    const readerFile = path.join(dataDir, "reader.hcl");
    fs.writeFileSync(
      readerFile,
      fs
        .readFileSync("examples/hostpath/job.hcl", "utf8")
        .replaceAll('"writer"', '"reader"')
        .replace("echo hello > /data/hello.txt", "grep -qx hello /data/hello.txt"),
    );
    await cli(["job", "run", readerFile]);
    assert.equal((await waitComplete("reader")).length, 1, "the reader found hello.txt in volume demo");
    await cli(["job", "stop", "-purge", "reader"]);
    await waitReleased();

    const storageDirs = hellos.map((f) => path.dirname(f));
    await cli(["volume", "delete", "demo"]);
    for (const d of storageDirs) assert.equal(fs.existsSync(d), false, `${d} removed by DeleteVolume`);
    const vols = await cliJson<unknown[]>(["volume", "status"]);
    assert.equal(vols.length, 0);

    const code = await agent.stop(90_000);
    assert.equal(code, 0, `agent exit code (log: ${logFile})`);
    assert.deepEqual(await mountsUnder(dataDir), [], "nothing is mounted under the data dir");
    assert.deepEqual(killProcessesUnder(dataDir), [], "no task process outlived the agent");
    assert.deepEqual(pluginProcesses(), [], "no plugin process outlived the agent");
    quickStartPassed = true;
  },
);
