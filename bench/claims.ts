/**
 * Server claim throughput with group commit. Prints (a) claim+release cycles per second through the
 * real server — HTTP for setup, the agent RPC socket for CSIVolume.Claim/Unpublish, SQLite on disk
 * with synchronous=FULL so every acknowledged claim is durable — against a no-op controller plugin
 * (the fake node agent answers ControllerPublish/Unpublish at once), 1, 16, 64 and 256 volumes in
 * parallel, with the Claim call's p50/p99 latency and the store writes and CPU one cycle costs; then
 * 64 in parallel again with group commit off (every txn its own commit); (b) the raw single-row
 * durable write rate of the same kind of store in the same run, one at a time (the ceiling without
 * group commit), and 64 at a time with group commit on and off; (c) the ratios: cycles/s at 64 in
 * parallel ÷ the raw rate (the issue's acceptance), and group commit on ÷ off.
 *
 *   node dist/bench/claims.js [volumes=256] [rounds=4]
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WebSocket } from "ws";
import { nullLogger } from "../src/internal/log.js";
import { RpcPeer } from "../src/internal/rpc/peer.js";
import { Server } from "../src/server/server.js";
import type { GroupCommitLimits } from "../src/server/state/group_commit.js";
import { SqliteStateStore } from "../src/server/state/sqlite_store.js";
import type { ClientMethods, ServerMethods } from "../src/structs/rpc.js";
import { makeNode } from "../test/builders/node.js";
import { controllerInfo, nodePluginInfo } from "../test/builders/plugin_info.js";

const VOLUMES = Number(process.argv[2] ?? 256);
/** Each measurement cycles every volume this many times. */
const ROUNDS = Number(process.argv[3] ?? 4);
const PARALLEL = [1, 16, 64, 256];

async function put(base: string, p: string, body: unknown): Promise<unknown> {
  const res = await fetch(base + p, { method: "PUT", body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`PUT ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

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

/** Claim+release cycles/s through a server on `dir`, at each of `parallel`. */
async function measureServer(
  dir: string,
  label: string,
  parallel: number[],
  groupCommit: Partial<GroupCommitLimits> = {},
): Promise<Map<number, number>> {
  const cycles = new Map<number, number>();
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 600_000,
    groupCommit,
  });
  await server.start();
  const peer = await connectNoopAgent(server.httpAddress);
  try {
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
    const { Allocs } = await peer.call("Node.GetAllocs", { NodeID: "bench-node", MinIndex: 0, WaitMs: 0 });
    if (Allocs.length !== VOLUMES) throw new Error(`placed ${Allocs.length} of ${VOLUMES} allocs`);
    const work = Allocs.map((a) => ({ alloc: a.ID, volume: `v[${/\[(\d+)\]$/.exec(a.Name)![1]}]` }));

    let lastIndex = 0;
    const claimMs: number[] = [];
    const cycle = async (w: { alloc: string; volume: string }) => {
      const t0 = process.hrtime.bigint();
      await peer.call("CSIVolume.Claim", {
        VolumeID: w.volume,
        Namespace: "default",
        AllocationID: w.alloc,
        NodeID: "bench-node",
        Mode: "write",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
      });
      claimMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const { Index } = await peer.call("CSIVolume.Unpublish", {
        VolumeID: w.volume,
        Namespace: "default",
        AllocationID: w.alloc,
        NodeID: "bench-node",
        State: "node-detached",
      });
      lastIndex = Math.max(lastIndex, Index);
    };
    await pool(work, 16, cycle); // warm-up
    for (const n of parallel) {
      // One at a time pays one fsync per write: one round keeps the run short.
      const rounds = Array.from({ length: n === 1 ? 1 : ROUNDS }, () => work).flat();
      claimMs.length = 0;
      const firstIndex = lastIndex;
      const t0 = process.hrtime.bigint();
      const cpu0 = process.cpuUsage();
      await pool(rounds, n, cycle);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      // The server and the fake agent share this process: its CPU per cycle is both sides'.
      const cpuMs = (cpu.user + cpu.system) / 1000 / rounds.length;
      const rate = rounds.length / s;
      cycles.set(n, rate);
      console.log(
        `${`claim+release, ${n} in parallel, ${label}`.padEnd(50)} ${rate.toFixed(0).padStart(7)} cycles/s  claim p50 ${pct(claimMs, 0.5)} ms p99 ${pct(claimMs, 0.99)} ms  ${((lastIndex - firstIndex) / rounds.length).toFixed(2)} writes/cycle  ${cpuMs.toFixed(2)} ms CPU/cycle  (${rounds.length} in ${s.toFixed(2)} s)`,
      );
    }
  } finally {
    peer.close();
    await server.stop();
  }
  return cycles;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-"));
  const cycles = await measureServer(path.join(dir, "on"), "group commit on", PARALLEL);
  // The same server with every txn committed alone: what group commit changes, in the same run.
  const off = await measureServer(path.join(dir, "off"), "group commit off", [64], { maxBatch: 1 });
  // The ceiling without group commit: one durable single-row transaction at a time.
  const rawRate = await rawWrites(path.join(dir, "raw"), 1, 300);
  console.log(
    `${"raw single-row durable writes, 1 at a time".padEnd(44)} ${rawRate.toFixed(0).padStart(7)} writes/s`,
  );
  for (const grouped of [false, true]) {
    const rate = await rawWrites(path.join(dir, `raw-${grouped}`), 64, grouped ? 4000 : 600, grouped);
    const label = `raw single-row writes, 64 at a time, group ${grouped ? "on" : "off"}`;
    console.log(`${label.padEnd(44)} ${rate.toFixed(0).padStart(7)} writes/s`);
  }
  const at64 = cycles.get(64) ?? 0;
  console.log(
    `claim+release at 64 in parallel ÷ raw 1-at-a-time write rate: ${(at64 / rawRate).toFixed(2)}× (acceptance ≥ 5×)`,
  );
  console.log(
    `claim+release at 64 in parallel, group commit on ÷ off: ${(at64 / (off.get(64) ?? 1)).toFixed(2)}×`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
  );
}

/** Single-row durable writes per second on a fresh store: `total` of them, `parallel` at a time. */
async function rawWrites(dir: string, parallel: number, total: number, grouped = true): Promise<number> {
  const store = new SqliteStateStore(dir, grouped ? {} : { groupCommit: { maxBatch: 1 } });
  let i = 0;
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
  store.close();
  return total / s;
}

function pct(values: number[], q: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(2);
}

await main();
