/**
 * The simulator fingerprints its host once for all its nodes (NodeSim's `fingerprint` seam): every
 * simulated node still registers the host's real attributes and resources, as the agent's own
 * fingerprint gives them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import { fingerprintNode } from "../../../src/client/node_identity.js";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeSim } from "../../../src/nodesim/nodesim.js";
import { SIM_DRIVER } from "../../../src/nodesim/sim_node.js";
import { Server } from "../../../src/server/server.js";
import type { Node } from "../../../src/structs/node.js";

test("nodesim: every simulated node registers the host's fingerprint", async () => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 300_000,
  });
  await server.start();
  const sim = new NodeSim({
    count: 3,
    servers: [server.httpAddress],
    pluginId: null,
    csi: { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 0 },
    namePrefix: "fp",
    dataDir: null,
    log: nullLogger,
  });
  try {
    await sim.start();
    const host = fingerprintNode(
      { [SIM_DRIVER]: { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: true } },
      os.tmpdir(),
    );
    const nodes = await Promise.all(
      sim.nodes.map(async (n) => {
        const res = await fetch(`${server.httpAddress}/v1/node/${n.nodeId}`);
        assert.equal(res.status, 200);
        return (await res.json()) as Node;
      }),
    );
    assert.equal(nodes.length, 3);
    for (const n of nodes) {
      assert.equal(n.Attributes?.["cpu.numcores"], String(os.cpus().length));
      assert.equal(n.Attributes?.["kernel.name"], os.platform());
      assert.equal(n.Attributes?.[`driver.${SIM_DRIVER}`], "1");
      assert.equal(n.Attributes?.["cpu.totalcompute"], host.attributes["cpu.totalcompute"]);
      assert.ok(n.NodeResources, "resources registered");
    }
  } finally {
    await sim.stop();
    await server.stop();
  }
});
