/**
 * Nomad agent configs start real berth agents: the server, client and single-node samples under
 * test/fixtures/nomad_agent/ (written in the idiom of Nomad's own, with settings berth does not
 * use), with only data_dir and the ports rewritten to temp dirs and free ports. Each agent starts
 * with warnings only (each unused setting named), the server and the single-node agent serve
 * /v1/agent/health, and the client, which finds its server as a Nomad client does — on the
 * server's RPC port (Nomad's 4647 here rewritten) — joins it as a ready node.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import {
  AgentProcess,
  REPO_ROOT,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
} from "../../helpers/agent_process.js";

const FIXTURES = path.join(REPO_ROOT, "test/fixtures/nomad_agent");
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-nomadagent-it-")));
const agents: AgentProcess[] = [];
let passed = false;

after(async () => {
  try {
    for (const a of agents.reverse()) await a.stop();
  } finally {
    const leftovers = killProcessGroupsUnder(dir);
    if (leftovers.length > 0 || !passed) {
      for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".log")))
        process.stderr.write(`${f}:\n${logTail(path.join(dir, f), 40)}\n`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], "processes left running");
  }
});

/** The sample as written, its data_dir and the given ports replaced. */
function sample(name: string, ports: Record<string, number>): string {
  let text = fs.readFileSync(path.join(FIXTURES, `${name}.hcl`), "utf8");
  text = text.replace(/data_dir\s*=\s*"[^"]*"/, `data_dir = "${path.join(dir, name)}"`);
  for (const [from, to] of Object.entries(ports)) text = text.replaceAll(from, String(to));
  const file = path.join(dir, `${name}.hcl`);
  fs.writeFileSync(file, text);
  return file;
}

function start(name: string, file: string): { agent: AgentProcess; log: string } {
  const log = path.join(dir, `${name}.log`);
  // rawExec: false: the sample's own config is all the agent gets.
  const agent = new AgentProcess(["-config", file], log, { BERTH_LOG_LEVEL: "info" }, { rawExec: false });
  agents.push(agent);
  return { agent, log };
}

async function healthy(addr: string): Promise<void> {
  await eventually(`${addr}/v1/agent/health`, async () => {
    const res = await fetch(`${addr}/v1/agent/health`);
    return res.ok ? true : undefined;
  });
}

async function readyNode(addr: string, name: string): Promise<{ ID: string; NodeClass: string }> {
  return eventually(`node ${name} ready at ${addr}`, async () => {
    const nodes = await getJson<{ ID: string; Name: string; Status: string; NodeClass: string }[]>(
      addr,
      "/v1/nodes",
    );
    return nodes.find((n) => n.Name === name && n.Status === "ready");
  });
}

/** The agent's warnings are the ones named; nothing was logged at ERROR. */
function assertWarningsOnly(log: string, want: RegExp[]): void {
  const text = fs.readFileSync(log, "utf8");
  assert.doesNotMatch(text, /\[ERROR\]/, `errors in ${log}`);
  for (const re of want) assert.match(text, re);
}

test("Nomad's server, client and single-node configs start berth; the client joins the server", async () => {
  const [http, rpc, clientHttp, devHttp, devRpc] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const server = start("server", sample("server", { "4646": http, "4647": rpc }));
  const addr = `http://127.0.0.1:${http}`;
  await healthy(addr);
  // /v1/status/leader names the RPC address, as Nomad's does: the advertised host, the RPC port.
  assert.equal(await getJson<string>(addr, "/v1/status/leader"), `127.0.0.1:${rpc}`);

  const client = start("client", sample("client", { "4647": rpc, "5656": clientHttp }));
  const node = await readyNode(addr, "client-1");
  assert.equal(node.NodeClass, "storage");

  const dev = start("dev", sample("dev", { "4646": devHttp, "4647": devRpc }));
  const devAddr = `http://127.0.0.1:${devHttp}`;
  await healthy(devAddr);
  await readyNode(devAddr, os.hostname());

  assert.ok(server.agent.running && client.agent.running && dev.agent.running);
  assertWarningsOnly(server.log, [
    /server\.hcl:\d+:\d+: consul is accepted but not used/,
    /server\.hcl:\d+:\d+: server\.raft_protocol is accepted but not used/,
    /server\.hcl:\d+:\d+: ports\.serf is accepted but not used/,
    /server\.hcl: server\.bootstrap_expect|server server_join: accepted but not used/,
  ]);
  assertWarningsOnly(client.log, [
    /client\.hcl:\d+:\d+: client\.cni_path is accepted but not used/,
    /client\.hcl:\d+:\d+: plugin\.docker\.config\.gc is accepted but not used/,
    /client\.options "driver\.allowlist" is accepted but not used/,
    /vault is accepted but not used/,
  ]);
  assertWarningsOnly(dev.log, [/ui is accepted but not used/, /enable_debug is accepted but not used/]);
  passed = true;
});
