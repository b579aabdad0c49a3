/**
 * Writes under read load (issue 10: "heavy reads slow writes 20×"). A real `berth agent -server`
 * process holds `allocs` allocations (jobs placed on a node the bench registers over the agent RPC
 * and that never runs them); the bench times `submits` job registrations one after another (each
 * PUT /v1/jobs answers once the job and its evaluation are stored), first alone, then while
 * `readers` clients loop over the heavy list reads (GET /v1/allocations, /v1/jobs, /v1/nodes), and
 * prints both and their ratio, measured in the same run. The reads answered meanwhile are counted
 * so a faster write path bought by starving readers would show.
 *
 *   node dist/bench/read_load.js [allocs=1000] [readers=8] [submits=50]
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { WebSocket } from "ws";
import { nullLogger } from "../src/internal/log.js";
import { RpcPeer } from "../src/internal/rpc/peer.js";
import type { ClientMethods, ServerMethods } from "../src/structs/rpc.js";
import { makeNode } from "../test/builders/node.js";
import { AgentProcess, eventually, freePort, getJson } from "../test/helpers/agent_process.js";

const ALLOCS = Number(process.argv[2] ?? 1000);
const READERS = Number(process.argv[3] ?? 8);
const SUBMITS = Number(process.argv[4] ?? 50);
const PER_JOB = 50;

const job = (id: string, count: number) => ({
  Job: {
    ID: id,
    Type: "service",
    TaskGroups: [
      {
        Name: "g",
        Count: count,
        Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/sleep", args: ["600"] } }],
      },
    ],
  },
});

async function put(base: string, route: string, body: unknown): Promise<void> {
  const res = await fetch(base + route, { method: "PUT", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`PUT ${route}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** Seconds for `SUBMITS` job registrations in a row, named `prefix-N`. */
async function submits(base: string, prefix: string): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < SUBMITS; i++) await put(base, "/v1/jobs", job(`${prefix}-${i}`, 1));
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  // On tmpfs when there is one: the bench measures the event loop, not the disk's fsync, whose
  // time on a shared machine varies more than the effect being measured.
  const root = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const dir = fs.mkdtempSync(path.join(root, "berth-bench-reads-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The readers hold more connections than Nomad's default per-client limit allows one address.
  const cfg = path.join(dir, "limits.hcl");
  fs.writeFileSync(cfg, "limits {\n  http_max_conns_per_client = 0\n}\n");
  const agent = new AgentProcess(
    ["-server", "-data-dir", dir, "-http-addr", `127.0.0.1:${port}`, "-heartbeat-ttl=1h", "-config", cfg],
    `${dir}.log`,
  );
  let peer: RpcPeer<ClientMethods, ServerMethods> | undefined;
  try {
    await eventually(
      "server",
      async () => ((await getJson<unknown[]>(base, "/v1/nodes")) ? true : undefined),
      30_000,
    );
    const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/agent/rpc");
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    peer = new RpcPeer<ClientMethods, ServerMethods>(ws, nullLogger);
    // The node proves who it is with its secret (node identity), as a real agent does.
    await peer.call("Node.Register", { Node: { ...makeNode("bench-node"), SecretID: randomUUID() } });
    for (let placed = 0; placed < ALLOCS; placed += PER_JOB) {
      await put(base, "/v1/jobs", job(`load-${placed}`, Math.min(PER_JOB, ALLOCS - placed)));
    }
    await eventually(
      `${ALLOCS} allocs placed`,
      async () => ((await getJson<unknown[]>(base, "/v1/allocations")).length >= ALLOCS ? true : undefined),
      300_000,
    );

    const alone = await submits(base, "alone");

    // The readers run on their own thread (own event loop), so the submit timings measure the
    // server, not the bench's own loop busy receiving list answers.
    const readers = new Worker(new URL(import.meta.url), { workerData: { base, readers: READERS } });
    const counts = new Int32Array(new SharedArrayBuffer(4));
    readers.postMessage(counts);
    const failed = new Promise<never>((_, reject) => readers.once("error", reject));
    // The readers are busy before the clock starts.
    await Promise.race([new Promise((r) => setTimeout(r, 1000)), failed]);
    const readsBefore = Atomics.load(counts, 0);
    const loaded = await Promise.race([submits(base, "loaded"), failed]);
    const readsDuring = Atomics.load(counts, 0) - readsBefore;
    await readers.terminate();

    console.log(
      `${SUBMITS} job submits, ${ALLOCS} allocs stored, ${READERS} clients looping over list reads:`,
    );
    console.log(
      `  alone            ${alone.toFixed(2)} s  (${((alone / SUBMITS) * 1000).toFixed(1)} ms each)`,
    );
    console.log(
      `  under read load  ${loaded.toFixed(2)} s  (${((loaded / SUBMITS) * 1000).toFixed(1)} ms each; ${readsDuring} reads answered meanwhile, ${(readsDuring / loaded).toFixed(0)}/s)`,
    );
    console.log(`  ratio            ${(loaded / alone).toFixed(1)}×`);
    console.log(
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
    );
  } finally {
    peer?.close();
    await agent.stop(60_000);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(`${dir}.log`, { force: true });
  }
}

/** The reader thread: `readers` clients, each looping over the list routes, counting answers. */
async function readLoop(base: string, readers: number, counts: Int32Array): Promise<void> {
  const routes = ["/v1/allocations", "/v1/jobs", "/v1/nodes"];
  const reader = async (n: number): Promise<void> => {
    for (let i = n; ; i++) {
      const route = routes[i % routes.length]!;
      const res = await fetch(base + route);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`GET ${route}: ${res.status}`);
      Atomics.add(counts, 0, 1);
    }
  };
  await Promise.all(Array.from({ length: readers }, (_, n) => reader(n)));
}

if (isMainThread) {
  await main();
} else {
  const { base, readers } = workerData as { base: string; readers: number };
  parentPort!.once("message", (counts: Int32Array) => void readLoop(base, readers, counts));
}
