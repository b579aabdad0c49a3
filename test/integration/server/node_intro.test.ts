/**
 * Issue 30 item 5: node introduction tokens (Nomad 1.11's client introduction). With
 * `client_introduction { enforcement = "strict" }` a node ID never seen before that presents no
 * valid token is refused (a clear error to the node, nothing stored, a log line), a node with one
 * registers, and a known node keeps working without it; "warn" registers it with one warning. The
 * token appears in the create answer only, never in a log. Real parts: in-process servers on
 * loopback, node agents on the real agent RPC path, the real HTTP API.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { createLogger } from "../../../src/internal/log.js";
import { isBerthError } from "../../../src/structs/errors.js";
import type { IntroEnforcement } from "../../../src/server/rpc/node_intro.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http, type AgentPeer } from "./fake_agent.js";

async function start(t: { after(fn: () => unknown): void }, enforcement: IntroEnforcement) {
  const lines: string[] = [];
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: createLogger({ level: "info", sink: { write: (l) => lines.push(l) } }),
    heartbeatTtlMs: 60_000,
    intro: { enforcement },
  });
  await server.start();
  t.after(() => server.stop());
  return { base: server.httpAddress, lines };
}

async function token(base: string, body: unknown): Promise<string> {
  const res = await http(base, "PUT", "/v1/acl/identity/client-introduction-token", body);
  assert.equal(res.status, 200, res.text);
  return res.json.JWT as string;
}

async function register(t: { after(fn: () => unknown): void }, base: string, id: string, intro?: string) {
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  return peer
    .call("Node.Register", { Node: makeNode(id), ...(intro === undefined ? {} : { IntroToken: intro }) })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
}

function refusedIntro(err: unknown, why: RegExp): void {
  assert.ok(isBerthError(err), `refused, got ${String(err)}`);
  assert.equal(err.code, "ERR_PERMISSION_DENIED", err.message);
  assert.match(err.message, /node introduction refused/);
  assert.match(err.message, why);
}

test("strict: a new node ID needs a valid introduction token; known nodes keep working; tokens never logged", async (t) => {
  const { base, lines } = await start(t, "strict");
  const res = await http(base, "PUT", "/v1/acl/identity/client-introduction-token", {
    NodeName: "web-1",
    TTL: 60e9,
  });
  assert.equal(res.status, 200, res.text);
  const scoped = res.json.JWT as string;
  assert.match(scoped, /^[\w-]+\.[\w-]+\.[\w-]+$/, "a JWT");
  assert.deepEqual(Object.keys(res.json), ["JWT"]);

  refusedIntro(await register(t, base, "stranger"), /no introduction token/);
  refusedIntro(
    await register(
      t,
      base,
      "forger",
      scoped.replace(/.$/, (c) => (c === "A" ? "B" : "A")),
    ),
    /signature/,
  );
  refusedIntro(await register(t, base, "web-2", scoped), /for node name "web-1"/);
  for (const id of ["stranger", "forger", "web-2"])
    assert.equal((await http(base, "GET", `/v1/node/${id}`)).status, 404, `${id}: nothing stored`);
  assert.ok(lines.some((l) => /node registration refused/.test(l) && /node introduction refused/.test(l)));

  // The token's own node registers; once known it needs no token again (a restarted agent, a reconnect).
  assert.equal(await register(t, base, "web-1", scoped), undefined);
  assert.equal(await register(t, base, "web-1"), undefined);
  assert.equal((await http(base, "GET", "/v1/node/web-1")).status, 200);
  // An unscoped token admits any name.
  assert.equal(await register(t, base, "db-1", await token(base, {})), undefined);

  // Refused bodies are named; berth has no node pools.
  const badPool = await http(base, "PUT", "/v1/acl/identity/client-introduction-token", {
    NodePool: "platform",
  });
  assert.equal(badPool.status, 400, badPool.text);
  assert.match(badPool.text, /NodePool/);

  const all = lines.join("\n");
  assert.ok(!all.includes(scoped.split(".")[2]!), "no token signature in any log line");
  assert.ok(lines.some((l) => /node introduction token created/.test(l)));
});

test("warn: a new node without a token registers, with one warning", async (t) => {
  const { base, lines } = await start(t, "warn");
  assert.equal(await register(t, base, "n1"), undefined);
  assert.equal(await register(t, base, "n1"), undefined);
  const warned = lines.filter((l) => l.includes("without a valid introduction token"));
  assert.equal(warned.length, 1, warned.join("\n"));
  assert.match(warned[0]!, /node=n1/);
});

test("a connection refused for its introduction learns nothing and is closed", async (t) => {
  const { base } = await start(t, "strict");
  const peer: AgentPeer = await connectAgent(base);
  t.after(() => peer.close());
  const err = await peer.call("Node.Register", { Node: makeNode("x") }).then(
    () => undefined,
    (e: unknown) => e,
  );
  refusedIntro(err, /no introduction token/);
  const after = await peer.call("Node.Heartbeat", { NodeID: "x" }).then(
    () => "answered",
    () => "refused",
  );
  assert.equal(after, "refused");
});
