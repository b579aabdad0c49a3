/**
 * `berth nodesim` against a server whose per-address agent RPC limit (`limits {
 * rpc_max_conns_per_client }`) is far below the number of simulated nodes: each node dials from
 * its own loopback address (src/nodesim/source_addr.ts), as separate hosts would, so every node
 * registers and the limit still holds per address. The real server, real node agent code and real
 * WebSockets on loopback.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeSim } from "../../../src/nodesim/nodesim.js";
import { Server } from "../../../src/server/server.js";

const NODES = 12;
const LIMIT = 3;

test(`nodesim: ${NODES} nodes register with a server that takes ${LIMIT} agent connections per address`, async () => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 300_000,
    limits: { rpcMaxConnsPerClient: LIMIT },
  });
  await server.start();
  const sim = new NodeSim({
    count: NODES,
    servers: [server.httpAddress],
    pluginId: null,
    csi: { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 0 },
    namePrefix: "lim",
    dataDir: null,
    // Long enough for a refused node's redial, short enough that a refused one fails the test fast.
    registerWaitMs: 5_000,
    log: nullLogger,
  });
  try {
    await sim.start();
    assert.equal(sim.counts().registered, NODES, "every simulated node registered");
    const res = await fetch(`${server.httpAddress}/v1/nodes`);
    const nodes = (await res.json()) as { Name: string; Status: string }[];
    assert.equal(nodes.filter((n) => n.Status === "ready").length, NODES);
  } finally {
    await sim.stop();
    await server.stop();
  }
});
