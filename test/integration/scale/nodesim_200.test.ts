/**
 * 200 simulated nodes (src/nodesim/, the real node agent code with simulated tasks and CSI plugins)
 * against a real in-process server over loopback: every node reports the plugin, per_alloc volumes
 * are claimed across the cluster by a job and released when it stops. What must stay exact at each
 * step: the plugin's counts, each volume's claims (one writer, the alloc of its index), the simulated
 * hosts' mounts and the CSI calls (every stage/publish undone exactly once, controller included).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeSim } from "../../../src/nodesim/nodesim.js";
import { eventually } from "../../helpers/agent_process.js";
import {
  del,
  get,
  perAllocJob,
  put,
  registerVolume,
  startScaleServer,
  type ApiAlloc,
  type ApiPlugin,
  type ApiVolume,
} from "./scale_fixtures.js";

const NODES = 200;
const VOLUMES = 30;
const PLUGIN = "sim-csi";

test(`${NODES} simulated nodes: plugin counts, claims and releases stay exact`, async () => {
  // A long heartbeat TTL: today a 200-node registration storm stalls the server for seconds
  // (issue 13), long enough for a node with the default 30 s TTL to miss heartbeats and be marked
  // down, which would change the counts this test checks; liveness under load is not its subject.
  const srv = await startScaleServer({ heartbeatTtlMs: 300_000 });
  const sim = new NodeSim({
    count: NODES,
    servers: [srv.base],
    pluginId: PLUGIN,
    csi: { nodeLatencyMs: 1, controllerLatencyMs: 1, errorRate: 0, maxVolumesPerNode: 0 },
    namePrefix: "sim",
    dataDir: null,
    log: nullLogger,
  });
  const pluginCounts = async () => {
    const p = await get<ApiPlugin>(srv.base, `/v1/plugin/csi/${PLUGIN}`);
    const { ControllersHealthy, ControllersExpected, NodesHealthy, NodesExpected } = p;
    return { ControllersHealthy, ControllersExpected, NodesHealthy, NodesExpected };
  };
  // The simulated plugins run as no job, so nothing is expected of them (Nomad: Expected counts
  // the plugin jobs' allocs); every node reports a healthy controller and node instance.
  const EXACT = { ControllersHealthy: NODES, ControllersExpected: 0, NodesHealthy: NODES, NodesExpected: 0 };
  try {
    await sim.start();
    assert.equal(sim.counts().registered, NODES);
    const nodes = await get<{ Status: string }[]>(srv.base, "/v1/nodes");
    assert.equal(nodes.length, NODES);
    await eventually("every node's plugin fingerprint", async () =>
      (await pluginCounts()).NodesHealthy === NODES ? true : undefined,
    );
    assert.deepEqual(await pluginCounts(), EXACT);

    for (let i = 0; i < VOLUMES; i++) await registerVolume(srv.base, `data[${i}]`, PLUGIN);
    for (let i = 0; i < VOLUMES; i++) {
      const v = await get<ApiVolume>(srv.base, `/v1/volume/csi/${encodeURIComponent(`data[${i}]`)}`);
      assert.equal(v.Schedulable, true, `data[${i}] schedulable`);
    }

    await put(srv.base, "/v1/jobs", perAllocJob("app", "data", VOLUMES));
    const allocs = await eventually(
      "every alloc running",
      async () => {
        const list = await get<ApiAlloc[]>(srv.base, "/v1/job/app/allocations");
        return list.length === VOLUMES && list.every((a) => a.ClientStatus === "running") ? list : undefined;
      },
      45_000,
    );
    assert.ok(new Set(allocs.map((a) => a.NodeID)).size > 1, "allocs spread over several nodes");
    for (const a of allocs) {
      const index = /\[(\d+)\]$/.exec(a.Name)![1];
      const v = await get<ApiVolume>(srv.base, `/v1/volume/csi/${encodeURIComponent(`data[${index}]`)}`);
      assert.deepEqual(Object.keys(v.WriteAllocs), [a.ID], `data[${index}] claimed by its alloc only`);
      assert.deepEqual(v.ReadAllocs, {});
    }
    // Each volume staged once and published once on its node, through the controller once.
    const running = sim.counts();
    assert.equal(running.mounts, 2 * VOLUMES);
    assert.equal(running.csiCalls["ControllerPublishVolume"], VOLUMES);
    assert.equal(running.csiCalls["NodeStageVolume"], VOLUMES);
    assert.equal(running.csiCalls["NodePublishVolume"], VOLUMES);
    assert.deepEqual(await pluginCounts(), EXACT);

    await del(srv.base, "/v1/job/app");
    await eventually(
      "every claim released",
      async () => {
        for (let i = 0; i < VOLUMES; i++) {
          const v = await get<ApiVolume>(
            srv.base,
            `/v1/volume/csi/${encodeURIComponent(`data[${i}]`)}?claims=true`,
          );
          const held = [v.ReadAllocs, v.WriteAllocs, v.PastClaims ?? {}].some(
            (m) => Object.keys(m).length > 0,
          );
          if (held) return undefined;
        }
        return true;
      },
      45_000,
    );
    const released = sim.counts();
    assert.equal(released.mounts, 0, "nothing left staged or published on any simulated host");
    assert.equal(released.csiCalls["NodeUnpublishVolume"], VOLUMES);
    assert.equal(released.csiCalls["NodeUnstageVolume"], VOLUMES);
    assert.equal(released.csiCalls["ControllerUnpublishVolume"], VOLUMES);
    assert.deepEqual(await pluginCounts(), EXACT);
    assert.equal(released.registered, NODES);
  } finally {
    await sim.stop();
    await srv.stop();
  }
  // Every node stopped: nothing of the simulator is left mounted or running.
  assert.equal(sim.counts().mounts, 0);
});
