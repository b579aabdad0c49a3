/**
 * Node identity with real agents: a `-server` and a `-client` process. The node agent keeps its
 * secret in its data dir (client/secret-id, 0600), registers with it, and after a restart is
 * still the same node; a rogue connection with the node's ID and another secret is refused while
 * the real node stays ready; the secret shows in no API answer and no log line.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { after, before } from "node:test";
import { eventually } from "../../helpers/agent_process.js";
import { isBerthError } from "../../../src/structs/errors.js";
import { connectAgent } from "../server/fake_agent.js";
import { makeNode } from "../../builders/node.js";
import { SplitAgents, Steps } from "./restart_fixtures.js";

const agents = new SplitAgents("node-identity");
const steps = new Steps();
const step = steps.step.bind(steps);
let nodeId: string;
let secret: string;

function connections(): number {
  return fs
    .readFileSync(agents.logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes(": connected to server")).length;
}

before(async () => {
  await agents.start();
  await agents.nodeReady();
});

after(async () => {
  await agents.cleanUp(steps.failed, 0);
});

step("the node agent keeps its secret in its data dir, root-only, and registers with it", async () => {
  nodeId = fs.readFileSync(path.join(agents.clientDir, "client", "node-id"), "utf8").trim();
  const file = path.join(agents.clientDir, "client", "secret-id");
  secret = fs.readFileSync(file, "utf8").trim();
  assert.match(secret, /^[0-9a-f-]{36}$/);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const node = await fetch(`${agents.cli.addr}/v1/node/${nodeId}`);
  assert.equal(node.status, 200);
  const text = await node.text();
  assert.ok(!text.includes(secret) && !/Secret/i.test(text), "the API shows no secret");
});

step("a rogue connection with the node's ID and another secret is refused; the node stays", async () => {
  const rogue = await connectAgent(agents.cli.addr, {}, { secret: randomUUID() });
  try {
    await assert.rejects(rogue.call("Node.Register", { Node: makeNode(nodeId) }), (err: unknown) => {
      assert.ok(isBerthError(err) && err.code === "ERR_PERMISSION_DENIED", String(err));
      return true;
    });
  } finally {
    rogue.close();
  }
  const nodes = await agents.cli.get<{ ID: string; Name: string; Status: string }[]>("/v1/nodes");
  assert.deepEqual(
    nodes?.map((n) => [n.ID, n.Status]),
    [[nodeId, "ready"]],
  );
  assert.equal(connections(), 1, "the real agent was not disconnected");
});

step("a restarted node agent is the same node: same ID, same secret, accepted", async () => {
  assert.equal(await agents.client!.stop(30_000), 0, "clean exit");
  agents.startClient();
  await eventually("the restarted agent to register again", async () =>
    connections() === 2 ? true : undefined,
  );
  await agents.nodeReady();
  const nodes = await agents.cli.get<{ ID: string }[]>("/v1/nodes");
  assert.deepEqual(
    nodes?.map((n) => n.ID),
    [nodeId],
  );
  assert.equal(fs.readFileSync(path.join(agents.clientDir, "client", "secret-id"), "utf8").trim(), secret);
  const log = fs.readFileSync(agents.logFile, "utf8");
  assert.ok(!log.includes("the server refused this node"), "the real node was never refused");
  assert.match(log, /node registration refused/, "the server logged the rogue's attempt");
  assert.ok(!log.includes(secret), "the secret is in no log line");
});
