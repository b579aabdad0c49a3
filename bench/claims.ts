/**
 * Server claim throughput. Prints (a) claims + releases per second through the real server — HTTP
 * for setup, the agent RPC socket for CSIVolume.Claim/Unpublish, SQLite on disk with
 * synchronous=FULL so every acknowledged claim is durable — against a no-op controller plugin
 * (the fake node agent answers ControllerPublish/Unpublish at once), sequentially and with
 * concurrent volumes; and (b) the raw single-row durable write rate of the same store, measured in
 * the same run, as the ceiling to compare against.
 *
 *   node dist/bench/claims.js [volumes=200] [concurrency=16]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WebSocket } from "ws";
import { nullLogger } from "../src/internal/log.js";
import { RpcPeer } from "../src/internal/rpc/peer.js";
import { Server } from "../src/server/server.js";
import { SqliteStateStore } from "../src/server/state/sqlite_store.js";
import type { ClientMethods, ServerMethods } from "../src/structs/rpc.js";
import { makeNode } from "../test/builders/node.js";
import { controllerInfo, nodePluginInfo } from "../test/builders/plugin_info.js";

const VOLUMES = Number(process.argv[2] ?? 200);
const CONCURRENCY = Number(process.argv[3] ?? 16);

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

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-"));
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 600_000,
  });
  await server.start();
  const peer = await connectNoopAgent(server.httpAddress);
  try {
    await peer.call("Node.Register", {
      Node: makeNode("bench-node", {
        CSIControllerPlugins: { noop: controllerInfo("noop", true) },
        CSINodePlugins: {
          noop: nodePluginInfo(
            "noop",
            { RequiresControllerPlugin: true },
            { ID: "ext-bench", MaxVolumes: 0 },
          ),
        },
      }),
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

    const cycle = async (w: { alloc: string; volume: string }) => {
      await peer.call("CSIVolume.Claim", {
        VolumeID: w.volume,
        Namespace: "default",
        AllocationID: w.alloc,
        NodeID: "bench-node",
        Mode: "write",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
      });
      await peer.call("CSIVolume.Unpublish", {
        VolumeID: w.volume,
        Namespace: "default",
        AllocationID: w.alloc,
        NodeID: "bench-node",
        State: "node-detached",
      });
    };
    const measure = async (label: string, concurrency: number) => {
      const t0 = process.hrtime.bigint();
      await pool(work, concurrency, cycle);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      console.log(
        `${label.padEnd(44)} ${(work.length / s).toFixed(0).padStart(7)} claim+release cycles/s  (${work.length} in ${s.toFixed(2)} s)`,
      );
    };
    await measure("claims+releases, 1 at a time", 1);
    await measure(`claims+releases, ${CONCURRENCY} volumes in parallel`, CONCURRENCY);
  } finally {
    peer.close();
    await server.stop();
  }

  // The ceiling: one durable single-row transaction at a time on the same kind of store.
  const raw = new SqliteStateStore(path.join(dir, "raw"));
  const writes = 500;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < writes; i++) {
    await raw.txn((tx) => {
      tx.putNode(makeNode("raw-node", { StatusUpdatedAt: i }));
    });
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(
    `${"raw single-row durable writes (same store)".padEnd(44)} ${(writes / s).toFixed(0).padStart(7)} writes/s`,
  );
  raw.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
  );
}

await main();
