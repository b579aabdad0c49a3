/**
 * Server cost at cluster scale (issue 13's first acceptance line): a real server in this process
 * (SQLite in a temp dir, HTTP + agent RPC on loopback) and the node simulator in a child process
 * (bench/scale_sim.ts, so its CPU is not counted), at two sizes. For each size it prints the
 * server's CPU (process.cpuUsage of this process) per
 *   - node registration: a node joining (Node.Register, its plugin fingerprint, its first alloc
 *     query), N nodes started 64 at a time;
 *   - heartbeat: an idle window of HEARTBEAT_WINDOW_MS, divided by the heartbeats the simulator
 *     counted in it (the nodes' alloc queries that time out and re-arm in the window count too);
 *   - volume register: MEASURED volumes PUT /v1/volume/csi/:id on top of the size's volumes (the
 *     rest were written into the store before the server opened it, which is not measured);
 *   - claim + release cycle: a job of CLAIMS allocs pinned to one node, each claiming its own volume
 *     (per_alloc), from submit until all run, then stopped until every claim is freed — placement,
 *     claim, ControllerPublish, node stage/publish reports, release steps included;
 * then each figure at the large size over the small one, and the event loop's max delay during each
 * phase (monitorEventLoopDelay). The volume and claim rows also print their cost net of the idle
 * background the heartbeat window measured (netOfIdle). Nothing here asserts; it measures.
 *
 * The default large size is what completes in about a minute on 2 cores today (registration cost
 * grows with the cluster, so N registrations cost O(N²), and each waits on the store's commits:
 * 500 nodes took 79 s and 1,000 nodes 194 s on 2026-11-24).
 *
 *   node dist/bench/scale.js [large_nodes=300] [large_volumes=3000]
 *   BERTH_SCALE_NODES=5000 BERTH_SCALE_VOLUMES=50000 node dist/bench/scale.js   (by hand: minutes)
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import os from "node:os";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { makeVolume } from "../test/builders/volume.js";
import {
  del,
  get,
  perAllocJob,
  put,
  startScaleServer,
  type ApiAlloc,
  type ApiVolume,
  type ScaleServer,
} from "../test/integration/scale/scale_fixtures.js";
import { SimChild } from "./sim_child.js";

const env = (k: string, d: number) => Number(process.env[k] ?? d);
const SMALL = { nodes: 100, volumes: 1000 };
const LARGE = {
  nodes: Number(process.argv[2] ?? env("BERTH_SCALE_NODES", 300)),
  volumes: Number(process.argv[3] ?? env("BERTH_SCALE_VOLUMES", 3000)),
};
const MEASURED = env("BERTH_SCALE_MEASURED_VOLUMES", 100);
// 50, about as many as one simulated node takes: a phase of 10 cycles (0.3 s) was decided by single
// events in it (a major GC, a pass that re-reads the whole node list), 1.3–2.5× between runs.
const CLAIMS = env("BERTH_SCALE_CLAIMS", 50);
const HEARTBEAT_TTL_MS = 15_000;
const HEARTBEAT_WINDOW_MS = env("BERTH_SCALE_HEARTBEAT_WINDOW_MS", 6000);
const PLUGIN = "sim-csi";

interface Phase {
  /** Server CPU per operation, ms. */
  perOpMs: number;
  /** The same less the cluster's idle background (heartbeats, timers) over the phase's wall time. */
  netPerOpMs?: number;
  /** Server CPU of the phase, ms. */
  cpuMs: number;
  ops: number;
  wallMs: number;
  maxDelayMs: number;
}

type Size = typeof SMALL;
type Results = Record<"register" | "heartbeat" | "volume" | "claim", Phase> & {
  rssMiB: number;
  down: number;
  /** The simulator process: its RSS and CPU since it started, at the end of the phases. */
  sim: { rssMiB: number; cpuMs: number };
};

/** Runs `fn`, returning the server CPU it took (this process), the wall time and the loop's worst delay. */
async function measure(fn: () => Promise<number>): Promise<Phase> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const ops = await fn();
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  h.disable();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return { perOpMs: cpuMs / Math.max(ops, 1), cpuMs, ops, wallMs, maxDelayMs: h.max / 1e6 };
}

/**
 * `phase` with its per-operation cost net of the idle background measured in the heartbeat window
 * (`idle`: CPU ms per wall ms). The background of 5,000 nodes' heartbeats is 12–17 % of a core, a
 * cost of its own (the heartbeat row), which a phase of 50 claim cycles would otherwise count as
 * the claims': the net figure is what the operations themselves add.
 */
function netOfIdle(phase: Phase, idle: number): Phase {
  return { ...phase, netPerOpMs: Math.max(0, phase.cpuMs - idle * phase.wallMs) / Math.max(phase.ops, 1) };
}

async function poll(what: string, fn: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function claimCycles(srv: ScaleServer): Promise<number> {
  await put(srv.base, "/v1/jobs", perAllocJob("claims", "c", CLAIMS, "sim-0"));
  await poll("claims running", async () => {
    const list = await get<ApiAlloc[]>(srv.base, "/v1/job/claims/allocations");
    return list.length === CLAIMS && list.every((a) => a.ClientStatus === "running");
  });
  await del(srv.base, "/v1/job/claims");
  await poll("claims released", async () => {
    for (let i = 0; i < CLAIMS; i++) {
      const v = await get<ApiVolume>(srv.base, `/v1/volume/csi/${encodeURIComponent(`c[${i}]`)}?claims=true`);
      if ([v.ReadAllocs, v.WriteAllocs, v.PastClaims ?? {}].some((m) => Object.keys(m).length > 0))
        return false;
    }
    return true;
  });
  return CLAIMS;
}

async function runSize(size: Size): Promise<Results> {
  const seeded = Math.max(0, size.volumes - MEASURED - CLAIMS);
  const srv = await startScaleServer({
    heartbeatTtlMs: HEARTBEAT_TTL_MS,
    seed: async (dir) => {
      const store = new SqliteStateStore(dir);
      for (let from = 0; from < seeded; from += 5000) {
        await store.txn((tx) => {
          for (let i = from; i < Math.min(seeded, from + 5000); i++) {
            tx.putVolume(makeVolume(`seed-${i}`, { Name: `seed-${i}`, PluginID: PLUGIN }));
          }
        });
      }
      store.close();
    },
  });
  const sim = new SimChild();
  try {
    const register = await measure(async () => {
      const { counts } = (await sim.ask({
        op: "start",
        servers: [srv.base],
        count: size.nodes,
        plugin: PLUGIN,
      })) as {
        counts: { registrations: number };
      };
      return counts.registrations;
    });
    const heartbeat = await measure(async () => {
      const before = await sim.heartbeats();
      await new Promise((r) => setTimeout(r, HEARTBEAT_WINDOW_MS));
      return (await sim.heartbeats()) - before;
    });
    // Printed as soon as measured (stderr): a later phase that fails at a large size keeps these.
    console.error(
      `${label(size)}: registration ${register.perOpMs.toFixed(3)} ms CPU each (${register.ops} in ` +
        `${(register.wallMs / 1000).toFixed(1)} s), heartbeat ${heartbeat.perOpMs.toFixed(3)} ms CPU each ` +
        `(${heartbeat.ops} in ${(heartbeat.wallMs / 1000).toFixed(1)} s, ` +
        `${((100 * heartbeat.perOpMs * heartbeat.ops) / heartbeat.wallMs).toFixed(1)} % of a core)`,
    );
    const ids = Array.from({ length: MEASURED }, (_, i) => `m-${i}`);
    const idle = heartbeat.cpuMs / heartbeat.wallMs;
    const volume = netOfIdle(
      await measure(async () => {
        await sim.ask({ op: "volumes", base: srv.base, ids, plugin: PLUGIN, concurrency: 4 });
        return MEASURED;
      }),
      idle,
    );
    const claimIds = Array.from({ length: CLAIMS }, (_, i) => `c[${i}]`);
    await sim.ask({ op: "volumes", base: srv.base, ids: claimIds, plugin: PLUGIN, concurrency: 4 });
    const claim = netOfIdle(await measure(() => claimCycles(srv)), idle);
    const nodes = await get<{ Status: string }[]>(srv.base, "/v1/nodes");
    const rssMiB = process.memoryUsage().rss / 2 ** 20;
    const { self } = (await sim.ask({ op: "counts" })) as { self: Results["sim"] };
    await sim.ask({ op: "stop" });
    const down = nodes.filter((n) => n.Status !== "ready").length;
    return { register, heartbeat, volume, claim, rssMiB, down, sim: self };
  } finally {
    sim.kill();
    await srv.stop();
  }
}

const label = (s: Size) => `${s.nodes} nodes / ${s.volumes} volumes`;
const fmt = (ms: number) => (ms >= 10 ? ms.toFixed(1) : ms.toFixed(3)).padStart(9) + " ms";

async function main(): Promise<void> {
  const small = await runSize(SMALL);
  const large = await runSize(LARGE);
  console.log(`server CPU per operation: small = ${label(SMALL)}, large = ${label(LARGE)}`);
  console.log(
    `${"".padEnd(24)} ${"small".padStart(12)} ${"large".padStart(12)}  large/small  max loop delay small / large`,
  );
  const rows: [string, keyof Omit<Results, "rssMiB" | "down" | "sim">][] = [
    ["node registration", "register"],
    ["heartbeat", "heartbeat"],
    ["volume register", "volume"],
    ["claim+release cycle", "claim"],
  ];
  for (const [name, key] of rows) {
    const [s, l] = [small[key], large[key]];
    console.log(
      `${name.padEnd(24)} ${fmt(s.perOpMs)} ${fmt(l.perOpMs)}  ${(l.perOpMs / s.perOpMs).toFixed(2).padStart(10)}×` +
        `  ${s.maxDelayMs.toFixed(0).padStart(6)} / ${l.maxDelayMs.toFixed(0)} ms` +
        `   (${s.ops} / ${l.ops} ops, ${(s.wallMs / 1000).toFixed(1)} / ${(l.wallMs / 1000).toFixed(1)} s)`,
    );
    if (s.netPerOpMs === undefined || l.netPerOpMs === undefined) continue;
    console.log(
      `${"  net of idle background".padEnd(24)} ${fmt(s.netPerOpMs)} ${fmt(l.netPerOpMs)}  ` +
        `${(l.netPerOpMs / Math.max(s.netPerOpMs, 1e-3)).toFixed(2).padStart(10)}×`,
    );
  }
  console.log(
    `server RSS after the phases: ${small.rssMiB.toFixed(0)} / ${large.rssMiB.toFixed(0)} MiB; ` +
      `nodes not ready at the end: ${small.down} / ${large.down}`,
  );
  const simLine = (r: Results, s: Size) =>
    `${r.sim.rssMiB.toFixed(0)} MiB RSS (${((r.sim.rssMiB * 1024) / s.nodes).toFixed(0)} KiB/node), ` +
    `${(r.sim.cpuMs / 1000).toFixed(1)} s CPU`;
  console.log(`simulator process: ${simLine(small, SMALL)} / ${simLine(large, LARGE)}`);
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
  );
}

await main();
