/**
 * A node agent's connection fails over between servers: given two, it connects to the first;
 * when that server goes away — or stops answering with its socket still open — it moves to the
 * next with backoff and registers there.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { WebSocketServer } from "ws";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { PROBE_MS, ServerConnection } from "../../../src/client/rpc/server_conn.js";
import { makeNode } from "../../builders/node.js";
import { eventually } from "../../helpers/agent_process.js";
import { fakeNodeSecret } from "../server/fake_agent.js";

async function server(): Promise<Server> {
  const s = new Server({ dataDir: null, httpAddr: "127.0.0.1:0", log: nullLogger, heartbeatTtlMs: 60_000 });
  await s.start();
  return s;
}

test("a node agent moves to the next server when its server goes away, and registers there", async () => {
  const first = await server();
  const second = await server();
  const registeredAt: string[] = [];
  const conn = new ServerConnection({
    servers: [first.httpAddress, second.httpAddress],
    log: nullLogger,
    installHandlers: () => undefined,
    onConnect: async (peer, signal) => {
      await peer.call(
        "Node.Register",
        { Node: { ...makeNode("mover"), SecretID: fakeNodeSecret("mover") } },
        { signal, timeoutMs: 10_000 },
      );
      registeredAt.push(conn.serverAddr);
    },
  });
  let firstStopped = false;
  try {
    conn.start();
    await eventually("the first connection", () => Promise.resolve(conn.connected || undefined), 10_000, 20);
    assert.deepEqual(registeredAt, [first.httpAddress]);
    await first.stop();
    firstStopped = true;
    await eventually(
      "the agent to move",
      () => Promise.resolve(registeredAt.length === 2 || undefined),
      15_000,
      20,
    );
    assert.equal(registeredAt[1], second.httpAddress);
    assert.equal(conn.serverAddr, second.httpAddress);
    const res = await fetch(`${second.httpAddress}/v1/node/mover`);
    assert.equal(((await res.json()) as { Status: string }).Status, "ready");
    await conn.call("Node.Heartbeat", { NodeID: "mover" }, { timeoutMs: 5_000 });
  } finally {
    await conn.stop();
    if (!firstStopped) await first.stop();
    await second.stop();
  }
});

/**
 * A server that accepted the agent, answered its registration, and then hung: it neither answers
 * calls nor pongs (a SIGSTOPped process or a path that drops packets looks the same from the node,
 * and its socket stays open). A WebSocket server with autoPong off stands in for it.
 */
async function hungAfterRegister(): Promise<{ addr: string; close: () => Promise<void> }> {
  const http = createServer();
  const wss = new WebSocketServer({ server: http, autoPong: false });
  wss.on("connection", (ws) => {
    let answered = false;
    ws.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString()) as { t: string; id: number };
      if (frame.t !== "req" || answered) return;
      answered = true;
      ws.send(JSON.stringify({ t: "res", id: frame.id, result: { HeartbeatTTL: 60_000, Index: 1 } }));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    addr: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

test("a node agent leaves a server that stops answering (no close), and registers with the next", async () => {
  const hung = await hungAfterRegister();
  const second = await server();
  const registeredAt: string[] = [];
  const conn = new ServerConnection({
    servers: [hung.addr, second.httpAddress],
    log: nullLogger,
    installHandlers: () => undefined,
    onConnect: async (peer, signal) => {
      await peer.call(
        "Node.Register",
        { Node: { ...makeNode("stranded"), SecretID: fakeNodeSecret("stranded") } },
        { signal, timeoutMs: 10_000 },
      );
      registeredAt.push(conn.serverAddr);
    },
  });
  try {
    conn.start();
    await eventually("the first connection", () => Promise.resolve(conn.connected || undefined), 10_000, 20);
    assert.deepEqual(registeredAt, [hung.addr]);
    const hungAt = Date.now();
    await assert.rejects(conn.call("Node.Heartbeat", { NodeID: "stranded" }, { timeoutMs: 1_000 }), {
      code: "ERR_RPC_TIMEOUT",
    });
    await eventually(
      "the agent to move to the next server",
      () => Promise.resolve(registeredAt.length === 2 || undefined),
      15_000,
      20,
    );
    const movedMs = Date.now() - hungAt;
    process.stderr.write(
      `failover from a hung server: registered with the next ${movedMs} ms after the call\n`,
    );
    assert.equal(registeredAt[1], second.httpAddress);
    // The call's timeout (1 s) + the probe (PROBE_MS) + a dial and a registration on loopback.
    assert.ok(movedMs < 1_000 + PROBE_MS + 5_000, `moved within the bound (${movedMs} ms)`);
    await conn.call("Node.Heartbeat", { NodeID: "stranded" }, { timeoutMs: 5_000 });
  } finally {
    await conn.stop();
    await hung.close();
    await second.stop();
  }
});
