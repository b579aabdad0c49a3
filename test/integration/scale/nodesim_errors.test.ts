/**
 * The simulator's injected CSI errors go through the node agent's real retries: with 30 % of volume
 * calls failing (seeded), every alloc still gets its volume, the claims are still exact, and
 * stopping the job still releases every claim and leaves nothing mounted.
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
  type ApiVolume,
} from "./scale_fixtures.js";

const VOLUMES = 8;

/** A seeded generator (Park–Miller), so a failure replays the same injected errors. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

const volume = (base: string, i: number) =>
  get<ApiVolume>(base, `/v1/volume/csi/${encodeURIComponent(`data[${i}]`)}?claims=true`);

test("injected CSI errors are retried by the real agent code: claims and releases still exact", async () => {
  const srv = await startScaleServer({ heartbeatTtlMs: 300_000 });
  const sim = new NodeSim({
    count: 20,
    servers: [srv.base],
    pluginId: "sim-csi",
    csi: {
      nodeLatencyMs: 5,
      controllerLatencyMs: 5,
      errorRate: 0.3,
      maxVolumesPerNode: 0,
      random: seeded(7),
    },
    namePrefix: "flaky",
    dataDir: null,
    log: nullLogger,
  });
  try {
    await sim.start();
    for (let i = 0; i < VOLUMES; i++) await registerVolume(srv.base, `data[${i}]`, "sim-csi");
    await put(srv.base, "/v1/jobs", perAllocJob("app", "data", VOLUMES));
    const allocs = await eventually("every alloc running", async () => {
      const list = await get<ApiAlloc[]>(srv.base, "/v1/job/app/allocations");
      return list.length === VOLUMES && list.every((a) => a.ClientStatus === "running") ? list : undefined;
    });
    for (const a of allocs) {
      const v = await volume(srv.base, Number(/\[(\d+)\]$/.exec(a.Name)![1]));
      assert.deepEqual(Object.keys(v.WriteAllocs), [a.ID]);
    }
    assert.equal(sim.counts().mounts, 2 * VOLUMES);
    assert.ok(sim.counts().injectedErrors > 0, "some volume calls failed and were retried");

    await del(srv.base, "/v1/job/app");
    await eventually("every claim released", async () => {
      for (let i = 0; i < VOLUMES; i++) {
        const v = await volume(srv.base, i);
        if ([v.ReadAllocs, v.WriteAllocs, v.PastClaims ?? {}].some((m) => Object.keys(m).length > 0))
          return undefined;
      }
      return true;
    });
    const c = sim.counts();
    assert.equal(c.mounts, 0, "nothing left staged or published");
    // Each volume was unpublished from the controller at least once (failed attempts count too).
    assert.ok((c.csiCalls["ControllerUnpublishVolume"] ?? 0) >= VOLUMES);
  } finally {
    await sim.stop();
    await srv.stop();
  }
});
