/**
 * The client side of bench/scale.ts, run as its child process (so none of its CPU is counted as the
 * server's): the node simulator, and the HTTP volume registrations. Driven over the IPC channel,
 * one request at a time, each answered when done:
 *   { op: "start", servers, count, plugin, prefix? }  → { op: "started", ms, counts }
 *     (another start adds a simulator of its own; give it another `prefix`: "sim" by default)
 *   { op: "counts" }                          → { op: "counts", counts, self: { rssMiB, cpuMs } }
 *   { op: "volumes", base, ids, plugin }      → { op: "volumes", ms }
 *   { op: "stop" }                            → { op: "stopped" }, then the process exits
 */
import { nullLogger } from "../src/internal/log.js";
import { NodeSim } from "../src/nodesim/nodesim.js";
import { registerVolume } from "../test/integration/scale/scale_fixtures.js";

export type SimRequest =
  | { op: "start"; servers: string[]; count: number; plugin: string; prefix?: string }
  | { op: "counts" }
  | { op: "volumes"; base: string; ids: string[]; plugin: string; concurrency: number }
  | { op: "stop" };

let sim: NodeSim | null = null;
/** Every simulator started (the last is `sim`), all stopped by `stop`. */
const sims: NodeSim[] = [];

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function handle(req: SimRequest): Promise<object> {
  switch (req.op) {
    case "start": {
      sim = new NodeSim({
        count: req.count,
        servers: req.servers,
        pluginId: req.plugin,
        csi: { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 0 },
        namePrefix: req.prefix ?? "sim",
        dataDir: null,
        log: nullLogger,
      });
      sims.push(sim);
      const t0 = performance.now();
      await sim.start();
      return { op: "started", ms: performance.now() - t0, counts: sim.counts() };
    }
    case "counts": {
      const cpu = process.cpuUsage();
      const self = { rssMiB: process.memoryUsage().rss / 2 ** 20, cpuMs: (cpu.user + cpu.system) / 1000 };
      return { op: "counts", counts: sim?.counts() ?? null, self };
    }
    case "volumes": {
      const t0 = performance.now();
      await pool(req.ids, req.concurrency, (id) => registerVolume(req.base, id, req.plugin));
      return { op: "volumes", ms: performance.now() - t0 };
    }
    case "stop":
      for (const s of sims) await s.stop();
      return { op: "stopped" };
  }
}

process.on("message", (req: SimRequest) => {
  handle(req).then(
    (answer) => {
      process.send!(answer, () => {
        if (req.op === "stop") process.disconnect();
      });
    },
    (err: unknown) => {
      process.send!({ op: "error", message: err instanceof Error ? err.message : String(err) });
    },
  );
});
