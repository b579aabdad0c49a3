/**
 * Nothing starves the event loop (issue 13). Prints, in one run:
 *
 * (a) the volumewatcher's share of a claim cycle: claim+release cycles through the real server
 *     (HTTP for setup, the agent RPC for CSIVolume.Claim/Unpublish, SQLite on disk) with 0 and then
 *     with `unrelated` unclaimed volumes of another plugin stored, as cycles/s and server CPU per
 *     cycle (process CPU over the cycles and the watcher's settling after them), and their ratio.
 *     The unrelated volumes are written straight into the state file before the server opens it.
 * (b) the longest event-loop delay while the scheduler places one big job (no volumes) on many
 *     nodes registered straight into the store, measured with perf_hooks' event-loop delay
 *     histogram and a 1 ms interval probe, against the pass's own duration.
 *
 * (c) the same with CSI: every node runs a healthy node plugin, and a job of `csi_allocs` allocs each
 *     with its own volume (per_alloc), with the pass's placements per second.
 *
 *   node dist/bench/event_loop.js [unrelated=50000] [cycles=200] [nodes=1000] [allocs=2000] [csi_allocs=1000]
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { WebSocket } from "ws";
import { nullLogger } from "../src/internal/log.js";
import { RpcPeer } from "../src/internal/rpc/peer.js";
import { Scheduler } from "../src/server/scheduler/scheduler.js";
import { Server } from "../src/server/server.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { validateJob } from "../src/structs/job_validate.js";
import type { ClientMethods, ServerMethods } from "../src/structs/rpc.js";
import { makeNode } from "../test/builders/node.js";
import { controllerInfo, nodePluginInfo } from "../test/builders/plugin_info.js";
import { makeVolume } from "../test/builders/volume.js";

const UNRELATED = Number(process.argv[2] ?? 50_000);
const CYCLES = Number(process.argv[3] ?? 200);
const NODES = Number(process.argv[4] ?? 1000);
const ALLOCS = Number(process.argv[5] ?? 2000);
/** Allocs of the CSI pass, each with its own volume. */
const CSI_ALLOCS = Number(process.argv[6] ?? 1000);
/** Volumes the claim cycles go round (each alloc claims its own, per_alloc). */
const CLAIMED = 50;

async function put(base: string, p: string, body: unknown): Promise<void> {
  const res = await fetch(base + p, { method: "PUT", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`PUT ${p}: ${res.status} ${await res.text()}`);
}

async function connectNoopAgent(base: string): Promise<RpcPeer<ClientMethods, ServerMethods>> {
  const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/agent/rpc");
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const peer = new RpcPeer<ClientMethods, ServerMethods>(ws, nullLogger);
  peer.handle("ClientCSI.ControllerPublishVolume", async () => ({ PublishContext: {} }));
  peer.handle("ClientCSI.ControllerUnpublishVolume", async () => ({}));
  peer.handle("ClientCSI.ControllerValidateVolume", async () => ({}));
  return peer;
}

/** Claim+release cycles with `unrelated` other volumes stored: cycles/s and CPU ms per cycle. */
async function claimCycles(unrelated: number): Promise<{ perSec: number; cpuMs: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-loop-"));
  if (unrelated > 0) {
    const seed = new SqliteStateStore(dir);
    await seed.txn((tx) => {
      for (let i = 0; i < unrelated; i++) tx.putVolume(makeVolume(`other-${i}`, { PluginID: "other" }));
    });
    seed.close();
  }
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
      Node: {
        ...makeNode("bench-node", {
          CSIControllerPlugins: { noop: controllerInfo("noop", true) },
          CSINodePlugins: {
            noop: nodePluginInfo(
              "noop",
              { RequiresControllerPlugin: true },
              { ID: "ext-bench", MaxVolumes: 0 },
            ),
          },
        }),
        // The node proves who it is with its secret, as a real agent does.
        SecretID: randomUUID(),
      },
    });
    for (let i = 0; i < CLAIMED; i++) {
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
            Count: CLAIMED,
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
    if (Allocs.length !== CLAIMED) throw new Error(`placed ${Allocs.length} of ${CLAIMED} allocs`);
    const work = Allocs.map((a) => ({ alloc: a.ID, volume: `v[${/\[(\d+)\]$/.exec(a.Name)![1]}]` }));
    // Let the start-up pass of the watcher (which reads every volume once) finish first.
    await new Promise((r) => setTimeout(r, 500));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let n = 0; n < CYCLES; n++) {
      const w = work[n % work.length]!;
      const req = { VolumeID: w.volume, Namespace: "default", AllocationID: w.alloc, NodeID: "bench-node" };
      await peer.call("CSIVolume.Claim", {
        ...req,
        Mode: "write",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
      });
      await peer.call("CSIVolume.Unpublish", { ...req, State: "node-detached" });
    }
    const s = (performance.now() - t0) / 1000;
    // The watcher's passes run after the writes that woke them (coalesced): count them too.
    await new Promise((r) => setTimeout(r, 300));
    const cpu = process.cpuUsage(cpu0);
    return { perSec: CYCLES / s, cpuMs: (cpu.user + cpu.system) / 1000 / CYCLES };
  } finally {
    peer.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One scheduling pass of a big job: the longest event-loop delay while it runs. With `csi`, every
 * node runs a healthy node plugin and each alloc has its own volume (per_alloc), one per node.
 */
async function schedulingPass(
  allocs: number,
  csi: boolean,
): Promise<{ passMs: number; maxDelayMs: number; probeMaxMs: number; cpuMaxMs: number; passCpuMs: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-loop-"));
  const store = new SqliteStateStore(dir);
  const scheduler = new Scheduler(store, nullLogger);
  try {
    const plugins = csi ? { CSINodePlugins: { p: nodePluginInfo("p") } } : {};
    await store.txn((tx) => {
      for (let i = 0; i < NODES; i++) tx.putNode(makeNode(`node-${String(i).padStart(5, "0")}`, plugins));
      if (csi) for (let i = 0; i < allocs; i++) tx.putVolume(makeVolume(`v[${i}]`, { PluginID: "p" }));
    });
    const job = validateJob({
      ID: "big",
      Type: "service",
      TaskGroups: [
        {
          Name: "g",
          Count: allocs,
          ...(csi
            ? {
                Volumes: {
                  data: {
                    Type: "csi",
                    Source: "v",
                    PerAlloc: true,
                    AccessMode: "single-node-writer",
                    AttachmentMode: "file-system",
                  },
                },
              }
            : {}),
          Tasks: [
            {
              Name: "t",
              Driver: "exec",
              Resources: { CPU: 10, MemoryMB: 10 },
              ...(csi ? { VolumeMounts: [{ Volume: "data", Destination: "/data" }] } : {}),
            },
          ],
        },
      ],
    });
    await store.txn((tx) => tx.putJob(job));
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    let probeMax = 0;
    // On a loaded machine a wall-clock gap is mostly other processes' time: the CPU this process
    // spent between two probe ticks is the stall it caused itself.
    let cpuMax = 0;
    const cpuNow = () => {
      const c = process.cpuUsage();
      return (c.user + c.system) / 1000;
    };
    let lastCpu = cpuNow();
    const cpu0 = lastCpu;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      probeMax = Math.max(probeMax, now - last);
      const c = cpuNow();
      cpuMax = Math.max(cpuMax, c - lastCpu);
      lastCpu = c;
      last = now;
    }, 1);
    histogram.enable();
    const t0 = performance.now();
    const result = await scheduler.evaluate("default", "big");
    const passMs = performance.now() - t0;
    // One more tick of the probe and the histogram, so a stall that lasted to the pass's end counts.
    await new Promise((r) => setTimeout(r, 20));
    histogram.disable();
    clearInterval(probe);
    if (result.placed !== allocs) throw new Error(`placed ${result.placed} of ${allocs}`);
    return {
      passMs,
      maxDelayMs: histogram.max / 1e6,
      probeMaxMs: probeMax,
      cpuMaxMs: cpuMax,
      passCpuMs: cpuNow() - cpu0,
    };
  } finally {
    await scheduler.stop();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const base = await claimCycles(0);
  const loaded = await claimCycles(UNRELATED);
  const line = (label: string, r: { perSec: number; cpuMs: number }) =>
    console.log(
      `${label.padEnd(52)} ${r.perSec.toFixed(0).padStart(6)} cycles/s  ${r.cpuMs.toFixed(2).padStart(7)} ms CPU/cycle`,
    );
  line("claim+release, 0 unrelated volumes", base);
  line(`claim+release, ${UNRELATED} unrelated volumes`, loaded);
  console.log(
    `${"ratio (loaded / empty)".padEnd(52)} ${(loaded.perSec / base.perSec).toFixed(2).padStart(6)} × rate    ${(loaded.cpuMs / base.cpuMs).toFixed(2).padStart(7)} × CPU`,
  );
  for (const [allocs, csi] of [
    [ALLOCS, false],
    [CSI_ALLOCS, true],
  ] as const) {
    const pass = await schedulingPass(allocs, csi);
    const what = `scheduling ${allocs} allocs on ${NODES} nodes${csi ? ", per_alloc CSI" : ""}`;
    console.log(
      `${what.padEnd(52)} pass ${pass.passMs.toFixed(0)} ms (${((allocs / pass.passMs) * 1000).toFixed(0)} allocs/s; ${pass.passCpuMs.toFixed(0)} ms CPU, ${((allocs / pass.passCpuMs) * 1000).toFixed(0)} allocs per CPU-s), longest event-loop delay ${pass.probeMaxMs.toFixed(1)} ms wall / ${pass.cpuMaxMs.toFixed(1)} ms of this process's CPU (1 ms probe; perf_hooks histogram max ${pass.maxDelayMs.toFixed(1)} ms)`,
    );
  }
}

await main();
