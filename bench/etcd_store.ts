/**
 * The etcd StateStore against the SQLite one, in one run. Prints, for each store: claim+release
 * cycles per second through the real claim endpoint (src/server/rpc/claim.ts: CSIVolume.Claim, then
 * CSIVolume.Unpublish freeing the claim; no controller step) with 1, 16 and 64 volumes in parallel,
 * the CPU one cycle costs this process, and the commits (etcd txns or SQLite COMMITs) per cycle;
 * then the raw durable write rate of the same backend one at a time (etcd: a single-key put; SQLite:
 * a one-row txn on a file with synchronous=FULL); and the ratios cycles/s at 64 ÷ raw rate, and
 * etcd ÷ SQLite. It starts its own etcd member (test/helpers/etcd_server.ts) on loopback.
 *
 *   node dist/bench/etcd_store.js [volumes=64] [rounds=8]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Etcd3 } from "etcd3";
import { KeyedMutex } from "../src/internal/keyed_mutex.js";
import { nullLogger } from "../src/internal/log.js";
import type { ServerDeps } from "../src/server/deps.js";
import { ClaimEndpoint } from "../src/server/rpc/claim.js";
import { EtcdStateStore } from "../src/server/state/etcd/etcd_store.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import type { StateStore } from "../src/server/state/store.js";
import { alloc, node, pluginInfo, volume, volumeJob } from "../test/conformance/builders.js";
import { startEtcd } from "../test/helpers/etcd_server.js";

const VOLUMES = Number(process.argv[2] ?? 64);
const ROUNDS = Number(process.argv[3] ?? 8);
const PARALLEL = [1, 16, 64];

type Counted = StateStore & { groupCommitStats(): { batches: number } };

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Cycles/s at each parallelism on `store`: claim then free each volume, ROUNDS times over. */
async function cycles(label: string, store: Counted): Promise<Map<number, number>> {
  const job = volumeJob("bench", { source: "vol", perAlloc: true, count: VOLUMES });
  await store.txn((tx) => {
    tx.putNode(node("n1", { CSINodePlugins: { p1: pluginInfo("p1", "node") } }));
    tx.putJob(job);
    for (let i = 0; i < VOLUMES; i++) {
      tx.putVolume(volume(`vol[${i}]`));
      tx.putAlloc(alloc(`alloc-${i}`, job, "n1", i));
    }
  });
  const endpoint = new ClaimEndpoint({
    store,
    volumeLocks: new KeyedMutex(),
    log: nullLogger,
    scheduler: { retryBlocked: async () => {} },
    controllers: { call: async () => ({}) },
  } as unknown as ServerDeps);
  const cycle = async (i: number) => {
    const req = { Namespace: "default", VolumeID: `vol[${i}]`, AllocationID: `alloc-${i}`, NodeID: "n1" };
    await endpoint.claim({
      ...req,
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
    await endpoint.unpublish({ ...req, State: "node-detached" });
  };
  const out = new Map<number, number>();
  for (const n of PARALLEL) {
    const work = Array.from({ length: VOLUMES * ROUNDS }, (_, k) => k % VOLUMES);
    const commits0 = store.groupCommitStats().batches;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await pool(work, n, cycle);
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const rate = work.length / s;
    out.set(n, rate);
    const commits = (store.groupCommitStats().batches - commits0) / work.length;
    console.log(
      `${`${label}: claim+release, ${n} in parallel`.padEnd(44)} ${rate.toFixed(0).padStart(6)} cycles/s  ${((cpu.user + cpu.system) / 1000 / work.length).toFixed(2)} ms CPU/cycle  ${commits.toFixed(2)} commits/cycle  (${work.length} in ${s.toFixed(2)} s)`,
    );
  }
  return out;
}

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  return n / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const etcd = await startEtcd();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-etcd-"));
  const client = new Etcd3({ hosts: etcd.endpoint });
  const stores: { close(): void }[] = [];
  try {
    const onEtcd = await EtcdStateStore.open({ endpoints: [etcd.endpoint], prefix: "/bench" });
    stores.push(onEtcd);
    const sqlite = new SqliteStateStore(dir);
    stores.push(sqlite);
    const e = await cycles("etcd", onEtcd);
    const q = await cycles("sqlite", sqlite);
    const rawEtcd = await timed(500, (i) => client.put("/raw/key").value(String(i)).exec());
    const rawSqlite = await timed(500, (i) =>
      sqlite.txn((tx) => tx.putNode(node("raw", { Name: String(i) }))),
    );
    console.log(
      `${"etcd: raw single-key durable put, 1 at a time".padEnd(44)} ${rawEtcd.toFixed(0).padStart(6)} writes/s`,
    );
    console.log(
      `${"sqlite: raw one-row durable txn, 1 at a time".padEnd(44)} ${rawSqlite.toFixed(0).padStart(6)} writes/s`,
    );
    const e64 = e.get(64) ?? 0;
    const q64 = q.get(64) ?? 0;
    console.log(`etcd: claim+release at 64 in parallel ÷ raw put rate: ${(e64 / rawEtcd).toFixed(2)}×`);
    console.log(`sqlite: claim+release at 64 in parallel ÷ raw write rate: ${(q64 / rawSqlite).toFixed(2)}×`);
    for (const n of PARALLEL) {
      console.log(
        `etcd ÷ sqlite cycles/s at ${n} in parallel: ${((e.get(n) ?? 0) / (q.get(n) ?? 1)).toFixed(2)}×`,
      );
    }
    console.log(
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}, etcd ${etcd.endpoint} (data in ${os.tmpdir()})`,
    );
  } finally {
    for (const s of stores) s.close();
    client.close();
    await etcd.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
