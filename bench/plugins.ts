/**
 * What plugin bookkeeping costs as the cluster grows, against the real SQLite store (a file, WAL,
 * synchronous=FULL, as a server keeps it) and the real scheduler, in one run:
 *
 * 1. Node registration with one CSI plugin on every node: server CPU per registration (one txn that
 *    puts one new node) once N nodes are stored, at N = 100 and N = 5,000, and the ratio; and
 *    per volume read as the API serves it (volumeView), at the same sizes.
 * 2. Placement with CSI volumes: the scheduler's plan (computePlan, feasibility and ranking) for a
 *    job of 10 allocs, each with its own `per_alloc` volume, on 1,000 nodes that all run the plugin.
 *
 * Nodes are put straight into the store (no agent RPC): the figures are the store's and the
 * scheduler's own. CPU is process.cpuUsage (user + system), so fsync waits are not counted; the
 * plan's wall time also shows how long it holds the event loop.
 *
 *   node dist/bench/plugins.js [large=5000]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { computePlan } from "../src/server/scheduler/plan.js";
import { volumeView } from "../src/server/state/views.js";
import type { Node } from "../src/structs/node.js";
import { makeNode } from "../test/builders/node.js";
import { nodePluginInfo } from "../test/builders/plugin_info.js";
import { volume, volumeJob } from "../test/conformance/builders.js";

const PLUGIN = "bench.csi";

function pluginNode(i: number): Node {
  const id = `node-${String(i).padStart(6, "0")}`;
  return makeNode(id, {
    NodeResources: {
      Cpu: { CpuShares: 64_000, TotalCpuCores: 16, ReservableCpuCores: [] },
      Memory: { MemoryMB: 256_000 },
      Disk: { DiskMB: 1_000_000 },
    },
    CSINodePlugins: { [PLUGIN]: nodePluginInfo(PLUGIN, { AllocID: `plugin-alloc-${i}` }) },
  });
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function withStore<T>(fn: (s: SqliteStateStore) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-plugins-"));
  const s = new SqliteStateStore(dir);
  return fn(s).finally(() => {
    s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

/** Stores nodes 0..n-1 in batches (the fill is not measured). */
async function fill(s: SqliteStateStore, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i += 250) {
    await s.txn((tx) => {
      for (let j = i; j < Math.min(to, i + 250); j++) tx.putNode(pluginNode(j));
    });
  }
}

/**
 * At `n` stored nodes: CPU ms per registration of one new node (one txn each), and per volume read
 * as the API serves it (volumeView: the volume with its plugin's health).
 */
async function costsAt(n: number, samples: number): Promise<{ register: number; volumeRead: number }> {
  return withStore(async (s) => {
    await fill(s, 0, n);
    await s.txn((tx) => tx.putVolume(volume("read-me", { PluginID: PLUGIN })));
    let t0 = cpuMs();
    for (let i = 0; i < samples; i++) volumeView(s, "default", "read-me");
    const volumeRead = (cpuMs() - t0) / samples;
    t0 = cpuMs();
    for (let i = 0; i < samples; i++) await s.txn((tx) => tx.putNode(pluginNode(n + i)));
    return { register: (cpuMs() - t0) / samples, volumeRead };
  });
}

/** Wall and CPU ms of one plan for a job of `allocs` allocs with per_alloc volumes on `nodes` nodes. */
async function placementCost(
  nodes: number,
  allocs: number,
): Promise<{ ms: number; cpu: number; placed: number }> {
  return withStore(async (s) => {
    await fill(s, 0, nodes);
    await s.txn((tx) => {
      for (let i = 0; i < allocs; i++) tx.putVolume(volume(`data[${i}]`, { PluginID: PLUGIN }));
    });
    const job = volumeJob("bench", { source: "data", perAlloc: true, count: allocs });
    await s.txn((tx) => tx.putJob(job));
    const stored = s.getJob("default", "bench")!;
    const t0 = performance.now();
    const c0 = cpuMs();
    const plan = computePlan(s, stored, Date.now() * 1e6);
    return { ms: performance.now() - t0, cpu: cpuMs() - c0, placed: plan.place.length };
  });
}

async function main(): Promise<void> {
  const large = Number(process.argv[2] ?? 5_000);
  const a = await costsAt(100, 200);
  const b = await costsAt(large, 200);
  const ratio = (x: number, y: number) => (y / x).toFixed(2);
  console.log(
    `node registration with a plugin on every node: ${a.register.toFixed(3)} ms CPU at 100 nodes, ` +
      `${b.register.toFixed(3)} ms at ${large} nodes (ratio ${ratio(a.register, b.register)})`,
  );
  console.log(
    `volume read (with its plugin's health): ${a.volumeRead.toFixed(3)} ms CPU at 100 nodes, ` +
      `${b.volumeRead.toFixed(3)} ms at ${large} nodes (ratio ${ratio(a.volumeRead, b.volumeRead)})`,
  );
  const place = await placementCost(1_000, 10);
  console.log(
    `placing 10 allocs with per_alloc CSI volumes on 1,000 nodes: ${place.ms.toFixed(1)} ms ` +
      `(${place.cpu.toFixed(1)} ms CPU; ${place.placed} placed, ` +
      `${((place.placed * 1000) / place.ms).toFixed(1)} allocs/s)`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
