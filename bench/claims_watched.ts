/**
 * Claims with a UI tab open (issue 30: "one browser tab slows claims 100×"). A real server in this
 * process on a SQLite file holding SEEDED volumes (50,000 by default, written before it opens, not
 * measured) plus 64 volumes a fake node agent claims and releases (bench/claims.ts's agent, in a
 * child process: CSIVolume.Claim then Unpublish over the agent RPC, 16 in parallel). Measured side
 * by side in one run, alternating, ROUNDS times each:
 *   - no watcher;
 *   - one watcher as the UI's volumes page now watches: a blocking GET
 *     /v1/volumes?type=csi&namespace=*&per_page=50&index=N (gzip accepted, as browsers do), asked
 *     again once it answers and 2 s have passed since the last ask (the UI's THROTTLE_MS, as
 *     Nomad's UI), in another child process (the browser is not the server);
 *   - with BERTH_WATCHED_UNPAGED=1, also one watcher on the whole unpaged list (the page before).
 * Printed: claim+release cycles/s of each (median of the rounds) and the watched ÷ unwatched ratio
 * (acceptance: the paged watcher ≥ 95 %). Nothing here asserts; it measures.
 *
 *   node dist/bench/claims_watched.js [seeded=50000] [rounds=3]
 */
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { nullLogger } from "../src/internal/log.js";
import { Server } from "../src/server/server.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { makeVolume } from "../test/builders/volume.js";

const SEEDED = Number(process.argv[2] ?? 50_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const VOLUMES = 64;
const PARALLEL = 16;
/** Claim+release cycles per measurement: every volume, this many times (seconds: several UI asks). */
const CYCLE_ROUNDS = Number(process.env.BERTH_WATCHED_CYCLE_ROUNDS ?? 40);
const WATCHER_FLAG = "--claims-watcher";
const UNPAGED = process.env.BERTH_WATCHED_UNPAGED === "1";

// ---- the watcher (child process) ----------------------------------------------------------

/** The UI's least time between two asks (ui/src/blocking.ts THROTTLE_MS, as Nomad's UI). */
const UI_THROTTLE_MS = 2_000;

function watcherMain(url: string): void {
  let index = 0;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const u = index > 0 ? `${url}&index=${index}&wait=30s` : url;
      http
        .get(u, { headers: { "Accept-Encoding": "gzip" }, agent: false }, (res) => {
          res.on("data", () => undefined);
          res.on("end", () => {
            index = Number(res.headers["x-nomad-index"] ?? index);
            resolve();
          });
        })
        .on("error", reject);
    });
  void (async () => {
    for (;;) {
      const asked = Date.now();
      await once().catch(() => undefined);
      await new Promise((r) => setTimeout(r, Math.max(0, asked + UI_THROTTLE_MS - Date.now())));
    }
  })();
  process.on("disconnect", () => process.exit(0));
}

// ---- the fake agent (bench/claims.ts in its child mode) ------------------------------------

type Answer = { op: string; cycles?: number; seconds?: number; message?: string };

class Child {
  private pending: ((m: Answer) => void) | null = null;
  constructor(readonly proc: ChildProcess) {
    proc.on("message", (m: Answer) => {
      const p = this.pending;
      this.pending = null;
      p?.(m);
    });
  }

  async ask(req: object): Promise<Answer> {
    const answer = new Promise<Answer>((resolve) => (this.pending = resolve));
    this.proc.send(req);
    const m = await answer;
    if (m.op === "error") throw new Error(`fake agent: ${m.message ?? ""}`);
    return m;
  }

  stop(): void {
    if (this.proc.connected) this.proc.disconnect();
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill("SIGKILL");
  }
}

async function put(base: string, p: string, body: unknown): Promise<void> {
  const res = await fetch(base + p, { method: "PUT", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`PUT ${p}: ${res.status} ${await res.text()}`);
}

async function seed(dir: string): Promise<void> {
  const store = new SqliteStateStore(dir, { log: nullLogger });
  try {
    for (let from = 0; from < SEEDED; from += 5000) {
      await store.txn((tx) => {
        for (let i = from; i < Math.min(SEEDED, from + 5000); i++)
          tx.putVolume(makeVolume(`seed-${String(i).padStart(6, "0")}`, { PluginID: "noop" }));
      });
    }
  } finally {
    store.close();
  }
}

async function setup(base: string, agent: Child): Promise<void> {
  await agent.ask({ op: "connect", base });
  for (let i = 0; i < VOLUMES; i++) {
    await put(base, `/v1/volume/csi/v[${i}]`, {
      Volumes: [
        {
          ID: `v[${i}]`,
          PluginID: "noop",
          ExternalID: `ext-v${i}`,
          RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
        },
      ],
    });
  }
  const data = { Type: "csi", Source: "v", PerAlloc: true, AccessMode: "single-node-writer" };
  await put(base, "/v1/jobs", {
    Job: {
      ID: "bench",
      Type: "service",
      TaskGroups: [
        {
          Name: "g",
          Count: VOLUMES,
          Volumes: { data: { ...data, AttachmentMode: "file-system" } },
          Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }],
        },
      ],
    },
  });
  await agent.ask({ op: "work" });
}

/** Cycles per second, and this process's (the server's) CPU per cycle in µs. */
async function measure(agent: Child): Promise<{ rate: number; cpuUs: number }> {
  const cpu0 = process.cpuUsage();
  const r = await agent.ask({ op: "run", parallel: PARALLEL, rounds: CYCLE_ROUNDS });
  const cpu = process.cpuUsage(cpu0);
  return { rate: r.cycles! / r.seconds!, cpuUs: (cpu.user + cpu.system) / r.cycles! };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-watched-"));
  const here = fileURLToPath(import.meta.url);
  const claimsJs = path.join(path.dirname(here), "claims.js");
  let agent: Child | undefined;
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 600_000,
  });
  try {
    await seed(dir);
    await server.start();
    const base = server.httpAddress;
    agent = new Child(
      fork(claimsJs, [String(VOLUMES), "1", "", "--claims-agent"], { execArgv: [], stdio: "inherit" }),
    );
    await setup(base, agent);
    const list = `${base}/v1/volumes?type=csi&namespace=*`;
    const modes: [string, string | null][] = [
      ["no watcher", null],
      ["a UI tab (per_page=50)", `${list}&per_page=50`],
      ...(UNPAGED ? ([["a watcher on the whole list", list]] as [string, string][]) : []),
    ];
    const rates = new Map<string, number[]>(modes.map(([m]) => [m, []]));
    const cpus = new Map<string, number[]>(modes.map(([m]) => [m, []]));
    await measure(agent); // warm-up (JIT, SQLite's cache): not counted
    for (let round = 0; round < ROUNDS; round++) {
      // The order turns each round, so a drift of the machine's load falls on every mode alike.
      for (const [mode, url] of [
        ...modes.slice(round % modes.length),
        ...modes.slice(0, round % modes.length),
      ]) {
        const watcher =
          url === null ? undefined : fork(here, [WATCHER_FLAG, url], { execArgv: [], stdio: "inherit" });
        // Let the watcher's first (full) read and its first blocking ask land before measuring.
        if (watcher) await new Promise((r) => setTimeout(r, 1500));
        const m = await measure(agent);
        rates.get(mode)!.push(m.rate);
        cpus.get(mode)!.push(m.cpuUs);
        if (watcher?.connected) watcher.disconnect();
        watcher?.kill("SIGKILL");
      }
    }
    const base0 = median(rates.get("no watcher")!);
    const cpu0 = median(cpus.get("no watcher")!);
    console.log(
      `claim+release, ${SEEDED} volumes stored, ${PARALLEL} in parallel (median of ${ROUNDS}; server CPU per ` +
        `cycle is the steadier figure on a shared machine):`,
    );
    for (const [mode] of modes) {
      const r = median(rates.get(mode)!);
      const c = median(cpus.get(mode)!);
      const all = rates
        .get(mode)!
        .map((x) => x.toFixed(0))
        .join(", ");
      const allCpu = cpus
        .get(mode)!
        .map((x) => x.toFixed(0))
        .join(", ");
      console.log(
        `  ${mode.padEnd(30)} ${r.toFixed(0).padStart(6)}/s ${((100 * r) / base0).toFixed(1).padStart(6)} %` +
          `   CPU/cycle ${c.toFixed(0).padStart(5)} µs → ${((100 * cpu0) / c).toFixed(1).padStart(6)} % of the cycles` +
          `   (rates ${all}; CPU/cycle µs ${allCpu})`,
      );
    }
    console.log(
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, load ${os.loadavg()[0]!.toFixed(2)}, node ${process.version}`,
    );
  } finally {
    agent?.stop();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes(WATCHER_FLAG)) watcherMain(process.argv[process.argv.indexOf(WATCHER_FLAG) + 1]!);
else await main();
