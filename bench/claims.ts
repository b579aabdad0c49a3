/**
 * Server claim throughput with group commit. Prints (a) claim+release cycles per second through the
 * real server — HTTP for setup, the agent RPC socket for CSIVolume.Claim/Unpublish, SQLite on disk
 * with synchronous=FULL so every acknowledged claim is durable — against a no-op controller plugin
 * (the fake node agent answers ControllerPublish/Unpublish at once), 1, 16, 64 and 256 volumes in
 * parallel, with the Claim call's p50/p99 latency, the store writes one cycle costs, and the CPU
 * one cycle costs the server (this process) and the fake agent apart; then 64 in parallel again
 * with group commit off (every txn its own commit); (b) the raw single-row durable write rate of the
 * same kind of store in the same run, one at a time (the ceiling without group commit), and 64 at
 * a time with group commit on and off; (c) the ratios: cycles/s at 64 in parallel ÷ the raw rate
 * (the issue's acceptance), and group commit on ÷ off; and the server's CPU per cycle beside the
 * wall time of one raw write (what the ratio is bounded by).
 *
 * The fake node agent (its 64 callers, and its controller answers) runs in a child process, as a
 * real agent is another process: the server's CPU (process.cpuUsage of this process) counts no
 * client work, and the two do not share one event loop.
 *
 *   node dist/bench/claims.js [volumes=256] [rounds=4] [parallel=1,16,64,256]
 *   (with a parallel list other than the default, the group-commit-off and 64-at-a-time raw runs
 *   are left out: a quick look at a few of the figures)
 *   BERTH_CLAIMS_PROFILE=DIR node dist/bench/claims.js   (also writes a CPU profile of the server
 *   during the 64-in-parallel measurement alone, group commit on, to DIR/claims-64.cpuprofile)
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { nullLogger } from "../src/internal/log.js";
import { RpcPeer } from "../src/internal/rpc/peer.js";
import { Server } from "../src/server/server.js";
import type { GroupCommitLimits } from "../src/server/state/local/group_commit.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import type { ClientMethods, ServerMethods } from "../src/structs/rpc.js";
import { makeNode } from "../test/builders/node.js";
import { controllerInfo, nodePluginInfo } from "../test/builders/plugin_info.js";

const VOLUMES = Number(process.argv[2] ?? 256);
/** Each measurement cycles every volume this many times. */
const ROUNDS = Number(process.argv[3] ?? 4);
const PARALLEL = (process.argv[4] ?? "1,16,64,256").split(",").map(Number);
const QUICK = process.argv[4] !== undefined;
const CHILD_FLAG = "--claims-agent";

async function put(base: string, p: string, body: unknown): Promise<unknown> {
  const res = await fetch(base + p, { method: "PUT", body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`PUT ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

// ---- the fake node agent (child process) ----------------------------------------------------

type AgentRequest =
  { op: "connect"; base: string } | { op: "work" } | { op: "run"; parallel: number; rounds: number };
type AgentAnswer =
  | { op: "ok" }
  | { op: "error"; message: string }
  | { op: "done"; claimMs: number[]; cycles: number; seconds: number; writes: number; cpuMs: number };

async function connectNoopAgent(base: string): Promise<RpcPeer<ClientMethods, ServerMethods>> {
  const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/agent/rpc");
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const peer = new RpcPeer<ClientMethods, ServerMethods>(ws, nullLogger);
  peer.handle("ClientCSI.ControllerPublishVolume", async () => ({ PublishContext: { device: "/dev/noop" } }));
  peer.handle("ClientCSI.ControllerUnpublishVolume", async () => ({}));
  peer.handle("ClientCSI.ControllerValidateVolume", async () => ({}));
  await peer.call("Node.Register", {
    // The node proves who it is with its secret (node identity), as a real agent does.
    Node: Object.assign(
      makeNode("bench-node", {
        CSIControllerPlugins: { noop: controllerInfo("noop", true) },
        CSINodePlugins: {
          noop: nodePluginInfo(
            "noop",
            { RequiresControllerPlugin: true },
            { ID: "ext-bench", MaxVolumes: 0 },
          ),
        },
      }),
      { SecretID: randomUUID() },
    ),
  });
  return peer;
}

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function agentMain(): void {
  let peer: RpcPeer<ClientMethods, ServerMethods> | undefined;
  let work: { alloc: string; volume: string }[] = [];
  let lastIndex = 0;
  const claimMs: number[] = [];
  const cycle = async (w: { alloc: string; volume: string }) => {
    const t0 = process.hrtime.bigint();
    await peer!.call("CSIVolume.Claim", {
      VolumeID: w.volume,
      Namespace: "default",
      AllocationID: w.alloc,
      NodeID: "bench-node",
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
    claimMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const { Index } = await peer!.call("CSIVolume.Unpublish", {
      VolumeID: w.volume,
      Namespace: "default",
      AllocationID: w.alloc,
      NodeID: "bench-node",
      State: "node-detached",
    });
    lastIndex = Math.max(lastIndex, Index);
  };
  const answer = (m: AgentAnswer) => process.send!(m);
  process.on("message", (req: AgentRequest) => {
    void (async () => {
      switch (req.op) {
        case "connect":
          peer = await connectNoopAgent(req.base);
          return answer({ op: "ok" });
        case "work": {
          const { Allocs } = await peer!.call("Node.GetAllocs", {
            NodeID: "bench-node",
            MinIndex: 0,
            WaitMs: 0,
          });
          if (Allocs.length !== VOLUMES) throw new Error(`placed ${Allocs.length} of ${VOLUMES} allocs`);
          work = Allocs.map((a) => ({ alloc: a.ID, volume: `v[${/\[(\d+)\]$/.exec(a.Name)![1]}]` }));
          await pool(work, 16, cycle); // warm-up
          return answer({ op: "ok" });
        }
        case "run": {
          const rounds = Array.from({ length: req.rounds }, () => work).flat();
          claimMs.length = 0;
          const firstIndex = lastIndex;
          const cpu0 = process.cpuUsage();
          const t0 = process.hrtime.bigint();
          await pool(rounds, req.parallel, cycle);
          const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
          const cpu = process.cpuUsage(cpu0);
          return answer({
            op: "done",
            claimMs: [...claimMs],
            cycles: rounds.length,
            seconds,
            writes: lastIndex - firstIndex,
            cpuMs: (cpu.user + cpu.system) / 1000,
          });
        }
      }
    })().catch((err: unknown) => answer({ op: "error", message: String(err) }));
  });
  process.on("disconnect", () => {
    peer?.close();
    process.exit(0);
  });
}

class AgentChild {
  private readonly child: ChildProcess;
  private pending: ((m: AgentAnswer) => void) | null = null;

  constructor() {
    // No inherited --cpu-prof and the like: a profile of the server is of this process alone.
    this.child = fork(fileURLToPath(import.meta.url), [String(VOLUMES), String(ROUNDS), "", CHILD_FLAG], {
      execArgv: [],
      stdio: "inherit",
    });
    this.child.on("message", (m: AgentAnswer) => {
      const p = this.pending;
      this.pending = null;
      p?.(m);
    });
  }

  async ask(req: AgentRequest): Promise<AgentAnswer> {
    const answer = new Promise<AgentAnswer>((resolve) => (this.pending = resolve));
    this.child.send(req);
    const m = await answer;
    if (m.op === "error") throw new Error(`fake agent: ${m.message}`);
    return m;
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

// ---- the server side (this process) --------------------------------------------------------

interface Measured {
  rate: number;
  serverCpuUs: number;
}

/** Claim+release cycles/s through a server on `dir`, at each of `parallel`. */
async function measureServer(
  dir: string,
  label: string,
  parallel: number[],
  groupCommit: Partial<GroupCommitLimits> = {},
): Promise<Map<number, Measured>> {
  const out = new Map<number, Measured>();
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 600_000,
    groupCommit,
  });
  await server.start();
  const agent = new AgentChild();
  try {
    await agent.ask({ op: "connect", base: server.httpAddress });
    for (let i = 0; i < VOLUMES; i++) {
      await put(server.httpAddress, `/v1/volume/csi/v[${i}]`, {
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
    await put(server.httpAddress, "/v1/jobs", {
      Job: {
        ID: "bench",
        Type: "service",
        TaskGroups: [
          {
            Name: "g",
            Count: VOLUMES,
            Volumes: {
              data: {
                Type: "csi",
                Source: "v",
                PerAlloc: true,
                AccessMode: "single-node-writer",
                AttachmentMode: "file-system",
              },
            },
            Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }],
          },
        ],
      },
    });
    await agent.ask({ op: "work" });
    for (const n of parallel) {
      // One at a time pays one fsync per write: one round keeps the run short.
      const profile = n === 64 && label === "group commit on" ? await startProfile() : undefined;
      const cpu0 = process.cpuUsage();
      const r = await agent.ask({ op: "run", parallel: n, rounds: n === 1 ? 1 : ROUNDS });
      const cpu = process.cpuUsage(cpu0);
      await profile?.();
      if (r.op !== "done") throw new Error(`fake agent answered ${r.op}`);
      const serverCpuUs = (cpu.user + cpu.system) / r.cycles;
      const rate = r.cycles / r.seconds;
      out.set(n, { rate, serverCpuUs });
      console.log(
        `${`claim+release, ${n} in parallel, ${label}`.padEnd(50)} ${rate.toFixed(0).padStart(7)} cycles/s` +
          `  claim p50 ${pct(r.claimMs, 0.5)} ms p99 ${pct(r.claimMs, 0.99)} ms` +
          `  ${(r.writes / r.cycles).toFixed(2)} writes/cycle` +
          `  CPU/cycle: server ${serverCpuUs.toFixed(0)} µs, agent ${((r.cpuMs * 1000) / r.cycles).toFixed(0)} µs` +
          `  (${r.cycles} in ${r.seconds.toFixed(2)} s)`,
      );
    }
  } finally {
    agent.stop();
    await server.stop();
  }
  return out;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-"));
  const cycles = await measureServer(path.join(dir, "on"), "group commit on", PARALLEL);
  // The same server with every txn committed alone: what group commit changes, in the same run.
  const off = QUICK
    ? new Map<number, Measured>()
    : await measureServer(path.join(dir, "off"), "group commit off", [64], { maxBatch: 1 });
  // The ceiling without group commit: one durable single-row transaction at a time.
  const raw = await rawWrites(path.join(dir, "raw"), 1, 300);
  console.log(
    `${"raw single-row durable writes, 1 at a time".padEnd(44)} ${raw.rate.toFixed(0).padStart(7)} writes/s` +
      `  (${(1e6 / raw.rate).toFixed(0)} µs wall, ${raw.cpuUs.toFixed(0)} µs CPU each)`,
  );
  for (const grouped of QUICK ? [] : [false, true]) {
    const r = await rawWrites(path.join(dir, `raw-${grouped}`), 64, grouped ? 4000 : 600, grouped);
    const label = `raw single-row writes, 64 at a time, group ${grouped ? "on" : "off"}`;
    console.log(`${label.padEnd(44)} ${r.rate.toFixed(0).padStart(7)} writes/s`);
  }
  const at64 = cycles.get(64) ?? { rate: 0, serverCpuUs: 0 };
  console.log(
    `claim+release at 64 in parallel ÷ raw 1-at-a-time write rate: ${(at64.rate / raw.rate).toFixed(2)}× (acceptance ≥ 5×)`,
  );
  console.log(
    `  server CPU per cycle at 64 in parallel: ${at64.serverCpuUs.toFixed(0)} µs; one raw durable write: ` +
      `${(1e6 / raw.rate).toFixed(0)} µs wall; 5× the raw rate needs ≤ ${(1e6 / raw.rate / 5).toFixed(0)} µs of server time per cycle`,
  );
  const at64off = off.get(64);
  if (at64off) {
    console.log(
      `claim+release at 64 in parallel, group commit on ÷ off: ${(at64.rate / at64off.rate).toFixed(2)}×`,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}`,
  );
}

/** Single-row durable writes per second on a fresh store: `total` of them, `parallel` at a time. */
async function rawWrites(
  dir: string,
  parallel: number,
  total: number,
  grouped = true,
): Promise<{ rate: number; cpuUs: number }> {
  const store = new SqliteStateStore(dir, grouped ? {} : { groupCommit: { maxBatch: 1 } });
  let i = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: parallel }, async (_, w) => {
      while (i < total) {
        const n = i++;
        await store.txn((tx) => {
          tx.putNode(makeNode(`raw-node-${w}`, { StatusUpdatedAt: n }));
        });
      }
    }),
  );
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  store.close();
  return { rate: total / s, cpuUs: (cpu.user + cpu.system) / total };
}

/** With BERTH_CLAIMS_PROFILE set, starts the CPU profiler; the answer stops it and writes the profile. */
async function startProfile(): Promise<(() => Promise<void>) | undefined> {
  const dir = process.env.BERTH_CLAIMS_PROFILE;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "claims-64.cpuprofile"), JSON.stringify(profile));
    session.disconnect();
  };
}

function pct(values: number[], q: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(2);
}

if (process.argv.includes(CHILD_FLAG)) agentMain();
else await main();
