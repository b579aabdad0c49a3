/**
 * Volume usage and health end to end (issue 15), as the README's quick start runs it: a real
 * `berth agent -dev -config examples/hostpath/agent.hcl -csi-volume-stats-interval=1s`, the real
 * hostpath plugin job, volume `demo`, and a task that holds it. `berth volume status demo` shows a
 * Usage section whose used bytes grow by 5 MiB when the task writes 5 MiB, and whose condition
 * turns abnormal when the volume's directory is removed behind the plugin's back. Nothing is left
 * mounted or running afterwards.
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
  REPO_ROOT,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  killProcessesUnder,
  logTail,
  runCli,
} from "../helpers/agent_process.js";

const MiB = 1024 * 1024;

let dataDir: string;
let logFile: string;
let agent: AgentProcess;
let env: Record<string, string>;
let passed = false;

interface Usage {
  NodeID: string;
  BytesUsed: number;
  BytesTotal: number;
  Abnormal: boolean;
  Message: string;
  UpdateTime: number;
}

async function cli(args: string[]) {
  const r = await runCli(args, env, 120_000);
  assert.equal(r.code, 0, `berth ${args.join(" ")} failed: ${r.stderr}\n${r.stdout}`);
  return r;
}

async function usage(): Promise<Usage | null | undefined> {
  const r = await runCli(["volume", "status", "-json", "demo"], env);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { Usage?: Usage | null }).Usage;
}

/** The "Usage" section of `berth volume status demo` as `key = value` pairs. */
async function usageSection(): Promise<Record<string, string>> {
  const { stdout } = await cli(["volume", "status", "demo"]);
  const lines = stdout.split("\n");
  const start = lines.indexOf("Usage");
  assert.ok(start >= 0, `a Usage section:\n${stdout}`);
  const out: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    const m = /^(\S.*?)\s+= (.*)$/.exec(line);
    if (!m) break;
    out[m[1]!] = m[2]!;
  }
  return out;
}

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-usage-"));
  logFile = path.join(os.tmpdir(), `berth-e2e-usage-${process.pid}.log`);
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  agent = new AgentProcess(
    [
      "-dev",
      "-config",
      path.join(REPO_ROOT, "examples/hostpath/agent.hcl"),
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
      "-csi-volume-stats-interval=1s",
    ],
    logFile,
  );
  env = { BERTH_ADDR: addr };
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  agent?.kill();
  const leftovers = killProcessGroupsUnder(dataDir);
  if (leftovers.length > 0 || !passed)
    process.stderr.write(`agent log (last 80 lines):\n${logTail(logFile)}\n`);
  for (const m of (await mountsUnder(dataDir)).reverse()) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(logFile, { force: true });
});

test(
  "volume status shows usage that grows with a 5 MiB write, and an abnormal condition",
  { timeout: 240_000 },
  async () => {
    await cli(["job", "run", "examples/hostpath/plugin.hcl"]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const r = await runCli(["plugin", "status", "-json", "hostpath"], env);
        if (r.code !== 0) return undefined;
        const p = JSON.parse(r.stdout) as { NodesHealthy: number; ControllersHealthy: number };
        return p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? true : undefined;
      },
      90_000,
    );
    await cli(["volume", "create", "examples/hostpath/volume.hcl"]);
    const volumesDir = path.join(dataDir, "hostpath-data", "volumes");
    const [volumeDir] = fs.readdirSync(volumesDir).map((d) => path.join(volumesDir, d));
    assert.ok(volumeDir, "the volume's directory in the plugin's storage");

    // A task that holds demo and writes 5 MiB once the test says so (a file in the volume).
    const jobFile = path.join(dataDir, "holder.hcl");
    fs.writeFileSync(
      jobFile,
      fs
        .readFileSync(path.join(REPO_ROOT, "examples/hostpath/job.hcl"), "utf8")
        .replaceAll('"writer"', '"holder"')
        .replace('type = "batch"', 'type = "service"')
        .replace(
          "echo hello > /data/hello.txt",
          "while [ ! -e /data/go ]; do sleep 0.2; done; head -c 5242880 /dev/urandom > /data/blob; sleep 3600",
        ),
    );
    await cli(["job", "run", jobFile]);

    const first = await eventually(
      "the first usage figure",
      async () => (await usage()) ?? undefined,
      90_000,
    );
    assert.equal(first.BytesTotal, 10 * MiB, "total is the volume's capacity (capacity_min 10MiB)");
    assert.equal(first.Abnormal, false);
    const section = await usageSection();
    assert.equal(section["Bytes Total"], "10 MiB");
    assert.equal(section["Node Condition"], "healthy");
    assert.match(section["Updated"] ?? "", /ago|just now/);

    fs.writeFileSync(path.join(volumeDir, "go"), "");
    const grown = await eventually(
      "used bytes to grow by 5 MiB",
      async () => {
        const u = await usage();
        return u && u.BytesUsed >= first.BytesUsed + 5 * MiB ? u : undefined;
      },
      60_000,
    );
    assert.ok(grown.BytesUsed < first.BytesUsed + 6 * MiB, `grew by about 5 MiB (${grown.BytesUsed})`);
    assert.match((await usageSection())["Bytes Used"] ?? "", /^5\.\d MiB \(5\d\.\d%\)$/);

    // The volume's directory removed behind the plugin's back: the volume turns abnormal.
    fs.rmSync(volumeDir, { recursive: true, force: true });
    await eventually(
      "the condition to turn abnormal",
      async () => ((await usage())?.Abnormal ? true : undefined),
      60_000,
    );
    assert.match(
      (await usageSection())["Node Condition"] ?? "",
      /^abnormal: volume directory .* is missing$/,
    );

    await cli(["job", "stop", "-purge", "holder"]);
    await eventually(
      "the claim to be released",
      async () => {
        const r = await runCli(["volume", "status", "-json", "demo"], env);
        const v = JSON.parse(r.stdout) as {
          WriteAllocs: Record<string, unknown>;
          PastClaims: Record<string, unknown>;
        };
        return Object.keys(v.WriteAllocs).length + Object.keys(v.PastClaims ?? {}).length === 0
          ? true
          : undefined;
      },
      60_000,
    );
    await cli(["volume", "delete", "demo"]);
    const code = await agent.stop(90_000);
    assert.equal(code, 0, `agent exit code (log: ${logFile})`);
    assert.deepEqual(await mountsUnder(dataDir), [], "nothing is mounted under the data dir");
    assert.deepEqual(killProcessesUnder(dataDir), [], "no task process outlived the agent");
    passed = true;
  },
);
