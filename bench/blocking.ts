/**
 * Blocking queries and paged lists at scale (issue 13), against a real in-process Server on
 * loopback over a real SQLite file (on tmpfs when there is one: the bench measures the event loop,
 * not the disk):
 *
 * 1. `waiters` clients block on `GET /v1/volumes?type=csi&index=N` with `volumes` volumes stored;
 *    one volume register wakes them. Printed: time from the write until every client has its whole
 *    answer, the write's own latency, the server thread's busy time meanwhile (event-loop
 *    utilisation of the main thread: the clients run on a worker thread), process CPU, RSS growth.
 * 2. `GET /v1/volumes?type=csi&per_page=100` (first page, a middle page by next_token, a prefix)
 *    at 1,000 and at `paged` volumes: p50/p99 and their ratio, measured in the same run.
 * 3. The node agents' GetAllocs wait: `nodes` waiters each on its own node's allocs (as
 *    Node.GetAllocs waits), one alloc update: how many waiters it wakes and the store write's cost,
 *    once with waiters on the whole allocs table and once with each on its node's key.
 *
 *   node dist/bench/blocking.js [waiters=1000] [volumes=10000] [paged=50000] [nodes=5000]
 */
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import { performance } from "node:perf_hooks";
import path from "node:path";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { nullLogger } from "../src/internal/log.js";
import { Server } from "../src/server/server.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { makeNode } from "../test/builders/node.js";
import { nodePluginInfo } from "../test/builders/plugin_info.js";
import { makeVolume } from "../test/builders/volume.js";
import { allocOf } from "../test/builders/alloc.js";
import { plainJob } from "../test/builders/job.js";
import { watchKeys } from "../src/server/state/watch_keys.js";

const WAITERS = Number(process.argv[2] ?? 1000);
const VOLUMES = Number(process.argv[3] ?? 10_000);
const PAGED = Number(process.argv[4] ?? 50_000);
const NODES = Number(process.argv[5] ?? 5000);
const PAGED_ROUNDS = 200;

const root = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
const pad = (i: number) => String(i).padStart(6, "0");

/** A state dir holding a node that runs plugin p1 and `count` volumes of it, written directly. */
async function filledDir(count: number): Promise<string> {
  const dir = fs.mkdtempSync(path.join(root, "berth-bench-blocking-"));
  const store = new SqliteStateStore(dir, { log: nullLogger });
  try {
    await store.txn((tx) => {
      tx.putNode(makeNode("bench-node", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
      for (let i = 0; i < count; i++) tx.putVolume(makeVolume(`vol-${pad(i)}`));
    });
  } finally {
    store.close();
  }
  return dir;
}

async function withServer<T>(dir: string, fn: (base: string) => Promise<T>): Promise<T> {
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 3_600_000,
    // The waiters hold more connections than Nomad's default per-client limit allows one address.
    limits: { httpMaxConnsPerClient: 0 },
  });
  await server.start();
  try {
    return await fn(server.httpAddress);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function get(base: string, route: string): Promise<{ body: Buffer; index: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(base + route);
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`GET ${route}: ${res.status} ${body.toString()}`);
  return { body, index: Number(res.headers.get("x-nomad-index")), ms: performance.now() - t0 };
}

/** A volume spec as `berth volume register` sends it. */
const spec = (id: string) => ({
  ID: id,
  PluginID: "p1",
  ExternalID: `ext-${id}`,
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
});

const now = () => performance.timeOrigin + performance.now();
const mib = (b: number) => (b / 2 ** 20).toFixed(0);

async function blockingWake(gzip: boolean): Promise<void> {
  const dir = await filledDir(VOLUMES);
  await withServer(dir, async (base) => {
    const full = await get(base, "/v1/volumes?type=csi");
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { base, index: full.index, waiters: WAITERS, gzip },
    });
    const failed = new Promise<never>((_, reject) => worker.once("error", reject));
    const message = <T>() =>
      Promise.race([new Promise<T>((resolve) => worker.once("message", (m: T) => resolve(m))), failed]);
    await message<"ready">();
    let peakRss = process.memoryUsage().rss;
    const rss0 = peakRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    type Done = { answered: number; early: number; failures: number; bytes: number; lastAt: number };
    const done = message<Done & { t0: number; writeAt: number }>();
    // The client thread sends the write too: this thread is the server's, busy with the wake.
    worker.postMessage("write");
    const r = await done;
    const { t0 } = r;
    const writeMs = r.writeAt - t0;
    const elu = performance.eventLoopUtilization(elu0);
    const cpu = process.cpuUsage(cpu0);
    clearInterval(sampler);
    await worker.terminate();
    console.log(
      `${WAITERS} clients blocked on GET /v1/volumes?type=csi&index=N, ${VOLUMES} volumes (answer ${mib(full.body.length)} MiB), one register; ${gzip ? "Accept-Encoding: gzip (as Nomad's Go client sends)" : "no Accept-Encoding"}:`,
    );
    console.log(
      `  all answered after   ${(r.lastAt - t0).toFixed(0)} ms  (${r.answered} answered, ${r.early} before the write, ${r.failures} failed, ${mib(r.bytes)} MiB received)`,
    );
    console.log(`  the write answered   ${writeMs.toFixed(0)} ms`);
    console.log(
      `  server thread busy   ${elu.active.toFixed(0)} ms;  process CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms;  RSS +${mib(peakRss - rss0)} MiB (peak ${mib(peakRss)} MiB)`,
    );
  });
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

async function pagedAt(count: number, rounds: number): Promise<Record<string, number[]>> {
  const dir = await filledDir(count);
  return withServer(dir, async (base) => {
    const out: Record<string, number[]> = { first: [], token: [], prefix: [] };
    const page = "/v1/volumes?type=csi&per_page=100";
    // Each read must be a fresh one: the list cache answers a repeated query at an unchanged index
    // from memory. The later pages start at a random volume (a query the cache has not seen); the
    // first page is read after a volume write each round, which also wakes the server's other
    // loops (the volumewatcher reads the volumes after each write), as a busy cluster would.
    const at = () => pad(Math.floor(Math.random() * count));
    for (let i = 0; i < rounds; i++) {
      out.token!.push((await get(base, `${page}&next_token=default.vol-${at()}`)).ms);
      out.prefix!.push((await get(base, `${page}&prefix=vol-0&next_token=default.vol-${at()}`)).ms);
    }
    for (let i = 0; i < rounds; i++) {
      const res = await fetch(base + "/v1/volume/csi/churn", {
        method: "PUT",
        body: JSON.stringify({ Volumes: [{ ...spec("churn"), Context: { round: String(i) } }] }),
      });
      await res.arrayBuffer();
      out.first!.push((await get(base, page)).ms);
    }
    const all = await get(base, "/v1/volumes?type=csi");
    out.full = [all.ms];
    return out;
  });
}

async function paging(): Promise<void> {
  // 200 reads of each kind: with fewer, the p99 is simply the slowest one.
  const small = await pagedAt(1000, PAGED_ROUNDS);
  const big = await pagedAt(PAGED, PAGED_ROUNDS);
  console.log(`GET /v1/volumes?type=csi&per_page=100, 1000 vs ${PAGED} volumes:`);
  const names: Record<string, string> = {
    token: "from a random next_token",
    prefix: "prefix=vol-0, random next_token",
    first: "first page after a volume write",
  };
  for (const name of ["token", "prefix", "first"]) {
    const a = small[name]!;
    const b = big[name]!;
    console.log(
      `  ${names[name]!.padEnd(34)} p50 ${percentile(a, 50).toFixed(1)} / ${percentile(b, 50).toFixed(1)} ms   p99 ${percentile(a, 99).toFixed(1)} / ${percentile(b, 99).toFixed(1)} ms   ratio p99 ${(percentile(b, 99) / percentile(a, 99)).toFixed(1)}×`,
    );
  }
  console.log(`  whole list (no per_page): ${small.full![0]!.toFixed(0)} / ${big.full![0]!.toFixed(0)} ms`);
}

/**
 * One alloc update with `NODES` node agents waiting for their allocs, each waiter looping as
 * Node.GetAllocs does (read the node's allocs, wait for the allocs table to move past the index
 * read, again); `keyed` waits on the node's own key, as GetAllocs now does, the other mode on the
 * whole table, as it did before. In-memory store: the figure is CPU, not fsync.
 */
async function allocFanout(keyed: boolean, updates: number): Promise<{ cpuMs: number; wakes: number }> {
  const s = new SqliteStateStore(null);
  const job = plainJob("fan");
  const first = allocOf(job, "n0");
  await s.txn((tx) => {
    tx.putJob(job);
    for (let i = 0; i < NODES; i++) {
      tx.putNode(makeNode(`n${i}`));
      tx.putAlloc(i === 0 ? first : allocOf(job, `n${i}`));
    }
  });
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  let wakes = 0;
  const loops = Array.from({ length: NODES }, async (_, i) => {
    const node = `n${i}`;
    for (;;) {
      const index = s.tableIndex("allocs");
      s.allocsByNode(node);
      const keys = keyed ? [watchKeys.allocsOfNode(node)] : undefined;
      try {
        await s.waitFor(["allocs"], index, ac.signal, 3_600_000, keys);
      } catch {
        return;
      }
      wakes++;
    }
  });
  const turn = () => new Promise((r) => setImmediate(r));
  await turn();
  wakes = 0;
  const cpu0 = process.cpuUsage();
  for (let k = 0; k < updates; k++) {
    await s.txn((tx) => tx.putAlloc({ ...first, ModifyTime: k + 1 }));
    await turn();
  }
  const cpu = process.cpuUsage(cpu0);
  ac.abort();
  await Promise.all(loops);
  s.close();
  return { cpuMs: (cpu.user + cpu.system) / 1000 / updates, wakes: wakes / updates };
}

async function fanout(): Promise<void> {
  const table = await allocFanout(false, 20);
  const keyed = await allocFanout(true, 20);
  console.log(`one alloc update with ${NODES} node agents waiting for their allocs (GetAllocs):`);
  console.log(
    `  waiting on the allocs table  ${table.cpuMs.toFixed(2)} ms CPU, ${table.wakes.toFixed(0)} waiters woken`,
  );
  console.log(
    `  waiting on their node's key  ${keyed.cpuMs.toFixed(2)} ms CPU, ${keyed.wakes.toFixed(0)} waiters woken`,
  );
  console.log(`  ratio                        ${(table.cpuMs / keyed.cpuMs).toFixed(1)}×`);
}

async function main(): Promise<void> {
  await blockingWake(true);
  await blockingWake(false);
  await paging();
  await fanout();
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
  );
}

/** The client thread: `waiters` blocking GETs on their own connections, counting bytes. */
async function waiterThread(base: string, index: number, waiters: number, gzip: boolean): Promise<void> {
  const url = `${base}/v1/volumes?type=csi&index=${index}&wait=5m`;
  let answered = 0;
  let failures = 0;
  let bytes = 0;
  let lastAt = 0;
  let writeSeen = false;
  let early = 0;
  const sent: Promise<void>[] = [];
  const all = Array.from(
    { length: waiters },
    () =>
      new Promise<void>((resolve, reject) => {
        const headers = gzip ? { "Accept-Encoding": "gzip" } : {};
        const req = http.get(url, { agent: false, headers }, (res) => {
          res.on("data", (c: Buffer) => (bytes += c.length));
          res.on("end", () => {
            answered++;
            if (!writeSeen) early++;
            if (res.statusCode !== 200) failures++;
            lastAt = now();
            resolve();
          });
        });
        req.on("error", reject);
        sent.push(new Promise((r) => req.on("finish", () => r())));
      }),
  );
  await Promise.all(sent);
  // Reads are admitted oldest first (read_queue.ts): once two later plain reads are answered, the
  // blocking ones sent before them are waiting inside their route.
  for (let i = 0; i < 2; i++) await get(base, "/v1/volumes?type=csi&per_page=1");
  await new Promise((r) => setTimeout(r, 500));
  const go = new Promise((r) => parentPort!.once("message", r));
  parentPort!.postMessage("ready");
  await go;
  writeSeen = true;
  const t0 = now();
  const write = await fetch(`${base}/v1/volume/csi/woken-${gzip}`, {
    method: "PUT",
    body: JSON.stringify({ Volumes: [spec(`woken-${gzip}`)] }),
  });
  await write.arrayBuffer();
  const writeAt = now();
  if (!write.ok) throw new Error(`register: ${write.status}`);
  // A stall is reported as it is: how many were answered after two minutes.
  await Promise.race([Promise.all(all), new Promise((r) => setTimeout(r, 120_000))]);
  parentPort!.postMessage({ answered, early, failures, bytes, lastAt, t0, writeAt });
}

if (isMainThread) {
  await main();
} else {
  const { base, index, waiters, gzip } = workerData as {
    base: string;
    index: number;
    waiters: number;
    gzip: boolean;
  };
  await waiterThread(base, index, waiters, gzip);
}
