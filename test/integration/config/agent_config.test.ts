/**
 * A real `berth agent -config FILE` with no flags at all: the file, in Nomad's shape, makes it a
 * server and a client, names the node, its datacenter and class, and picks the HTTP address. As
 * Nomad ships it, raw_exec is disabled: the node fingerprints it as not detected ("disabled") and a
 * raw_exec job is not placed ("missing drivers"). Restarted with a second config file that enables
 * it (`plugin "raw_exec" { config { enabled = true } }`), the same node runs raw_exec tasks.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import {
  AgentProcess,
  RAW_EXEC_CONFIG,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-agentcfg-it-")));
const logFile = path.join(dir, "agent.log");
let agent: AgentProcess | undefined;
let passed = false;

after(async () => {
  try {
    await agent?.stop();
  } finally {
    const leftovers = killProcessGroupsUnder(dir);
    if (leftovers.length > 0 || !passed) process.stderr.write(`agent log:\n${logTail(logFile, 60)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], "processes left running");
  }
});

interface NodeView {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass: string;
  Status: string;
  Attributes: Record<string, string>;
  Drivers: Record<string, { Detected: boolean; Healthy: boolean; HealthDescription: string }>;
}

function job(name: string): string {
  return `job "${name}" {
  datacenters = ["dc-cfg"]
  type        = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;
}

async function readyNode(addr: string, rawExecDetected: boolean): Promise<NodeView> {
  return eventually(`the node to be ready with raw_exec detected=${rawExecDetected}`, async () => {
    const nodes = await getJson<{ ID: string; Status: string }[]>(addr, "/v1/nodes");
    const id = nodes.find((n) => n.Status === "ready")?.ID;
    if (!id) return undefined;
    const node = await getJson<NodeView>(addr, `/v1/node/${id}`);
    return node.Drivers.raw_exec?.Detected === rawExecDetected ? node : undefined;
  });
}

test("-config alone runs a server+client; raw_exec is off until the config enables it", async () => {
  const [port, rpcPort] = await Promise.all([freePort(), freePort()]);
  const addr = `http://127.0.0.1:${port}`;
  const config = path.join(dir, "agent.hcl");
  fs.writeFileSync(
    config,
    `name       = "cfg-node"
datacenter = "dc-cfg"
data_dir   = "${path.join(dir, "data")}"
bind_addr  = "127.0.0.1"
log_level  = "DEBUG"
ports {
  http = ${port}
  rpc  = ${rpcPort}
}
server { enabled = true }
client {
  enabled    = true
  node_class = "cfgclass"
  meta { "team.name" = "storage" }
}
`,
  );
  agent = new AgentProcess(["-config", config], logFile, {}, { rawExec: false });
  const node = await readyNode(addr, false);
  assert.equal(node.Name, "cfg-node");
  assert.equal(node.Datacenter, "dc-cfg");
  assert.equal(node.NodeClass, "cfgclass");
  const raw = node.Drivers.raw_exec!;
  assert.deepEqual([raw.Detected, raw.Healthy, raw.HealthDescription], [false, false, "disabled"]);
  assert.equal(node.Attributes["driver.raw_exec"], undefined);
  assert.equal(node.Drivers.exec?.Detected, true, "exec stays enabled");

  const env = { BERTH_ADDR: addr };
  const first = path.join(dir, "first.hcl");
  fs.writeFileSync(first, job("first"));
  const run = await runCli(["job", "run", first], env);
  assert.equal(run.code, 0, run.stderr);
  const failed = await eventually("the placement failure", async () => {
    const evals = await getJson<
      { FailedTGAllocs?: Record<string, { ConstraintFiltered?: Record<string, number> }> }[]
    >(addr, "/v1/job/first/evaluations");
    return evals.find((e) => e.FailedTGAllocs?.g)?.FailedTGAllocs?.g;
  });
  assert.deepEqual(failed.ConstraintFiltered, { "missing drivers": 1 });
  assert.deepEqual(await getJson<unknown[]>(addr, "/v1/job/first/allocations"), []);

  // The same node, restarted with a second config file that enables raw_exec.
  assert.equal(await agent.stop(), 0);
  const enable = path.join(dir, "raw_exec.hcl");
  fs.writeFileSync(enable, RAW_EXEC_CONFIG);
  agent = new AgentProcess(["-config", config, "-config", enable], logFile, {}, { rawExec: false });
  const again = await readyNode(addr, true);
  assert.equal(again.ID, node.ID, "the same node");
  assert.equal(again.Attributes["driver.raw_exec"], "1");
  const second = path.join(dir, "second.hcl");
  fs.writeFileSync(second, job("second"));
  const run2 = await runCli(["job", "run", second], env);
  assert.equal(run2.code, 0, run2.stderr);
  await eventually("the raw_exec task to complete", async () => {
    const allocs = await getJson<{ ClientStatus: string }[]>(addr, "/v1/job/second/allocations");
    return allocs.some((a) => a.ClientStatus === "complete") ? true : undefined;
  });
  passed = true;
});
