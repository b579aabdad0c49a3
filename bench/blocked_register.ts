/**
 * Node registration with one blocked CSI job (issue 30: "any blocked job makes writes O(cluster)
 * again"). A real server in this process (SQLite in a temp dir, HTTP + agent RPC on loopback) and
 * the node simulator in a child process (bench/sim_child.ts, so its CPU is not counted). Each run:
 *   - one simulated node `pre-0` registers; a volume `held` (single-node-writer) is registered and
 *     a job `holder` pinned to pre-0 claims it and runs;
 *   - with a blocked job: a job `waiter` wants the same volume and is blocked (its writer claim is
 *     taken: a node registration cannot unblock it, the claim's release can);
 *   - measured: N nodes register (Node.Register, their plugin fingerprint, their first alloc
 *     query), 64 at a time — the server's CPU (process.cpuUsage of this process) per registration;
 *     then MEASURED volumes registered over HTTP, CPU per volume register.
 * At 500 and 2,000 nodes, each with and without the blocked job, then the ratios 2,000 / 500 (the
 * acceptance: with the blocked job within 1.5×). Nothing here asserts; it measures.
 *
 *   node dist/bench/blocked_register.js [small=500] [large=2000]
 */
import os from "node:os";
import {
  get,
  perAllocJob,
  put,
  startScaleServer,
  type ApiAlloc,
  type ScaleServer,
} from "../test/integration/scale/scale_fixtures.js";
import { SimChild } from "./sim_child.js";

const SMALL = Number(process.argv[2] ?? 500);
const LARGE = Number(process.argv[3] ?? 2000);
const MEASURED = Number(process.env.BERTH_BLOCKED_MEASURED_VOLUMES ?? 100);
const PLUGIN = "sim-csi";

interface Run {
  registerMs: number;
  volumeMs: number;
  wallS: number;
}

/** One alloc claiming volume `held` (not per_alloc), pinned to `node` when given. */
function singleVolumeJob(id: string, node?: string) {
  const spec = perAllocJob(id, "held", 1, node);
  spec.Job.TaskGroups[0]!.Volumes.data.PerAlloc = false;
  return spec;
}

async function poll(what: string, fn: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function cpuOf(fn: () => Promise<unknown>): Promise<{ cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
}

async function evalsOf(srv: ScaleServer, job: string): Promise<{ Status: string }[]> {
  return get<{ Status: string }[]>(srv.base, `/v1/job/${job}/evaluations`);
}

async function run(nodes: number, blocked: boolean): Promise<Run> {
  const srv = await startScaleServer({ heartbeatTtlMs: 15_000 });
  const sim = new SimChild();
  try {
    await sim.ask({ op: "start", servers: [srv.base], count: 1, plugin: PLUGIN, prefix: "pre" });
    await sim.ask({ op: "volumes", base: srv.base, ids: ["held"], plugin: PLUGIN, concurrency: 1 });
    await put(srv.base, "/v1/jobs", singleVolumeJob("holder", "pre-0"));
    await poll("the holder running", async () => {
      const allocs = await get<ApiAlloc[]>(srv.base, "/v1/job/holder/allocations");
      return allocs.some((a) => a.ClientStatus === "running");
    });
    if (blocked) {
      await put(srv.base, "/v1/jobs", singleVolumeJob("waiter"));
      await poll("the waiter blocked", async () =>
        (await evalsOf(srv, "waiter")).some((e) => e.Status === "blocked"),
      );
    }
    const reg = await cpuOf(() =>
      sim.ask({ op: "start", servers: [srv.base], count: nodes, plugin: PLUGIN, prefix: "sim" }),
    );
    const ids = Array.from({ length: MEASURED }, (_, i) => `m-${i}`);
    const vol = await cpuOf(() =>
      sim.ask({ op: "volumes", base: srv.base, ids, plugin: PLUGIN, concurrency: 4 }),
    );
    await sim.ask({ op: "stop" });
    return {
      registerMs: reg.cpuMs / nodes,
      volumeMs: vol.cpuMs / MEASURED,
      wallS: (reg.wallMs + vol.wallMs) / 1000,
    };
  } finally {
    sim.kill();
    await srv.stop();
  }
}

const f = (ms: number) => ms.toFixed(3).padStart(8) + " ms";

async function main(): Promise<void> {
  const results = new Map<string, Run>();
  for (const blocked of [true, false]) {
    for (const n of [SMALL, LARGE]) {
      const r = await run(n, blocked);
      results.set(`${n}/${blocked}`, r);
      console.error(
        `${n} nodes, ${blocked ? "one blocked CSI job" : "no blocked job"}: registration ${f(r.registerMs)} CPU, ` +
          `volume register ${f(r.volumeMs)} CPU (${r.wallS.toFixed(1)} s)`,
      );
    }
  }
  console.log(`server CPU per write, ${SMALL} and ${LARGE} nodes (one run each)`);
  console.log(`${"".padEnd(40)} ${String(SMALL).padStart(11)} ${String(LARGE).padStart(11)}  ratio`);
  for (const blocked of [true, false]) {
    const [s, l] = [results.get(`${SMALL}/${blocked}`)!, results.get(`${LARGE}/${blocked}`)!];
    const tag = blocked ? "one blocked CSI job" : "no blocked job";
    console.log(
      `${`node registration, ${tag}`.padEnd(40)} ${f(s.registerMs)} ${f(l.registerMs)}  ` +
        `${(l.registerMs / s.registerMs).toFixed(2)}×`,
    );
    console.log(
      `${`volume register, ${tag}`.padEnd(40)} ${f(s.volumeMs)} ${f(l.volumeMs)}  ` +
        `${(l.volumeMs / s.volumeMs).toFixed(2)}×`,
    );
  }
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, load ${os.loadavg()[0]!.toFixed(2)}, node ${process.version}`,
  );
}

await main();
