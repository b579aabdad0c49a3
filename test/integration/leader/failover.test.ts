/**
 * A node agent's connection fails over between servers: given two, it connects to the first;
 * when that server goes away it moves to the next with backoff and registers there.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { ServerConnection } from "../../../src/client/rpc/server_conn.js";
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
