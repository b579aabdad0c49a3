/**
 * Secrets never in logs, checked end to end: a real `berth agent -dev` at debug log level with
 * berth's csi-hostpath plugin (raw_exec, so its call log lands on the host). A volume created and
 * one registered with secrets through the CLI, a job that claims, mounts and releases the created
 * one (the plugin's CreateVolume and ControllerPublishVolume carry the secrets; that they arrive
 * whole is at_rest_restart.test.ts's check): the agent's whole log, every CLI answer and the
 * server's and client's state files hold none of them.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import { hostpathPluginJob } from "../builders/hostpath_plugin_job.js";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
} from "../helpers/agent_process.js";

const CREATE_SECRET = "e2e-create-pw-1f9a7c";
const REGISTER_SECRET = "e2e-register-tok-5d20e8";
let dir: string;
let dataDir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let passed = false;
const outputs: string[] = [];

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-harden-"));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  // AgentProcess runs the agent with BERTH_LOG_LEVEL=debug: every debug line is in the log file.
  agent = new AgentProcess(["-dev", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`], logFile);
  await eventually(
    "the dev node to be ready",
    async () => {
      const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
      return nodes.some((n) => n.Status === "ready") ? true : undefined;
    },
    30_000,
  );
});

after(async () => {
  agent?.kill();
  const leftovers = killProcessesUnder(dir);
  if (!passed || leftovers.length > 0)
    process.stderr.write(`--- agent log (tail) ---\n${logTail(logFile)}\n`);
  for (const m of (await mountsUnder(dir)).reverse()) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(leftovers, [], "nothing was left running");
});

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args, { BERTH_ADDR: addr });
  outputs.push(r.stdout, r.stderr);
  assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

const capability =
  'capability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n';

async function allocStatus(job: string, status: string): Promise<void> {
  await eventually(`${job} to be ${status}`, async () => {
    const allocs = await getJson<{ ClientStatus: string }[]>(addr, `/v1/job/${job}/allocations`);
    if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error(`${job} failed`);
    return allocs.length === 1 && allocs[0]!.ClientStatus === status ? true : undefined;
  });
}

test(
  "secrets of created and registered volumes reach the plugin and never the log, answers or state",
  { timeout: 120_000 },
  async () => {
    const callLog = path.join(dir, "calls.jsonl");
    const args = [
      "--node-id=${node.unique.id}",
      "--attach-required",
      `--state-dir=${path.join(dir, "storage")}`,
      `--call-log=${callLog}`,
    ];
    await cli([
      "job",
      "run",
      writeFile("plugin.hcl", hostpathPluginJob({ job: "hostpath", driver: "raw_exec", args })),
    ]);
    await eventually("the plugin to be healthy", async () => {
      const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
        addr,
        "/v1/plugin/csi/hostpath",
      ).catch(() => undefined);
      return p && p.ControllersHealthy === 1 && p.NodesHealthy === 1 ? p : undefined;
    });

    await cli([
      "volume",
      "create",
      writeFile(
        "vol.hcl",
        `id = "sv"\nname = "sv"\ntype = "csi"\nplugin_id = "hostpath"\ncapacity_min = "1MiB"\n${capability}` +
          `secrets {\n  password = "${CREATE_SECRET}"\n}\n`,
      ),
    ]);
    const ext = (await getJson<{ ExternalID: string }>(addr, "/v1/volume/csi/sv")).ExternalID;
    await cli([
      "volume",
      "register",
      writeFile(
        "reg.hcl",
        `id = "rv"\nname = "rv"\ntype = "csi"\nplugin_id = "hostpath"\nexternal_id = "${ext}"\n${capability}` +
          `secrets {\n  token = "${REGISTER_SECRET}"\n}\n`,
      ),
    ]);
    outputs.push(await cli(["volume", "status", "sv"]), await cli(["volume", "status", "rv"]));

    const job = `job "user" {
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "sv"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 600"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;
    await cli(["job", "run", writeFile("user.hcl", job)]);
    await allocStatus("user", "running");
    await cli(["job", "stop", "user"]);
    await allocStatus("user", "complete");
    await eventually("the claim to be released", async () => {
      const v = await getJson<{ ReadAllocs: object | null; WriteAllocs: object | null }>(
        addr,
        "/v1/volume/csi/sv",
      );
      return Object.keys(v.WriteAllocs ?? {}).length === 0 && Object.keys(v.ReadAllocs ?? {}).length === 0
        ? true
        : undefined;
    });

    // The calls that carry the secrets ran (csi-hostpath's call log names calls, never secrets).
    const calls = fs.readFileSync(callLog, "utf8");
    assert.match(calls, /CreateVolume/);
    assert.match(calls, /ControllerPublishVolume/);

    // The whole log, shutdown included (a -dev stop releases every volume).
    assert.equal(await agent.stop(), 0, "the agent stopped cleanly");
    const log = fs.readFileSync(logFile, "utf8");
    assert.match(log, /\[DEBUG\]/, "the agent logged at debug level");
    for (const secret of [CREATE_SECRET, REGISTER_SECRET]) {
      assert.equal(log.includes(secret), false, `${secret} in the agent log`);
      assert.equal(outputs.join("\n").includes(secret), false, `${secret} in a CLI answer`);
      for (const sub of ["server", "client"]) {
        for (const f of fs.readdirSync(path.join(dataDir, sub))) {
          const p = path.join(dataDir, sub, f);
          if (fs.statSync(p).isFile())
            assert.equal(fs.readFileSync(p).includes(secret), false, `${secret} in ${sub}/${f}`);
        }
      }
    }
    passed = true;
  },
);
