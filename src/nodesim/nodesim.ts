/**
 * The node simulator: N simulated nodes (sim_node.ts) in one process against a real server.
 *
 * Scale contracts (5,000 nodes in one process):
 * - No per-node busy loop: each node is the real agent, whose work is timers (heartbeat at a third
 *   of the server's TTL, csimanager re-fingerprint) and one blocking Node.GetAllocs query held open
 *   by the server; a node whose allocs do not change costs the simulator nothing between them.
 * - One WebSocket per node (the agent RPC needs one per node: the server knows a node by its
 *   connection), no gRPC (the plugins answer in-process), state DBs in memory (no file handles).
 * - Staggered start: at most `startConcurrency` nodes are between start and their first
 *   registration at any time, so the server sees a steady stream instead of N connects at once, and
 *   the simulator's own pace follows the server's.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { anySignal, sleep } from "../internal/abort.js";
import type { Logger } from "../internal/log.js";
import type { ClientTls } from "../internal/tls.js";
import { SimCsiStats, type SimCsiBehaviour } from "./sim_csi.js";
import { fingerprintNode } from "../client/node_identity.js";
import { SimNode } from "./sim_node.js";
import { sourceAddressFor } from "./source_addr.js";

export interface NodeSimOptions {
  count: number;
  servers: string[];
  tls?: ClientTls;
  /** Plugin every node runs as a monolith (node + controller); null: none. */
  pluginId: string | null;
  csi: SimCsiBehaviour;
  /** Node names are `<prefix>-<i>`, i from 0. */
  namePrefix: string;
  /** Nodes' directories (identity, alloc dirs, plugin dirs); null: a temp dir removed at stop. */
  dataDir: string | null;
  datacenter?: string;
  /** Nodes starting at once (see the file comment); 64 by default. */
  startConcurrency?: number;
  /** How long start() waits for one node's first registration before it goes on; 60 s default. */
  registerWaitMs?: number;
  log: Logger;
}

export interface NodeSimCounts {
  nodes: number;
  /** Nodes that registered at least once. */
  registered: number;
  registrations: number;
  heartbeats: number;
  csiCalls: Record<string, number>;
  injectedErrors: number;
  /** Volumes staged or published on simulated hosts right now. */
  mounts: number;
}

export class NodeSim {
  readonly nodes: SimNode[] = [];
  readonly csiStats = new SimCsiStats();
  private registered = new Set<number>();
  private registrations = 0;
  private heartbeats = 0;
  private dataDir = "";
  private ownsDataDir = false;
  private readonly stopCtl = new AbortController();
  private starting: Promise<void> = Promise.resolve();
  /** The host's fingerprint, taken by the first node to start (fingerprintNode). */
  private hostFingerprint: ReturnType<typeof fingerprintNode> | undefined;

  constructor(private readonly opts: NodeSimOptions) {
    if (!Number.isInteger(opts.count) || opts.count < 1) {
      throw new Error(`count must be a whole number of nodes, at least 1, got ${opts.count}`);
    }
  }

  /**
   * Starts every node, `startConcurrency` at a time, each waiting for its first registration (or
   * `registerWaitMs`); resolves once all have started. Registration failures are the agent's to
   * retry (it redials with backoff), so a slow or refusing server delays, never fails, start().
   */
  async start(onProgress?: (registered: number) => void): Promise<void> {
    if (this.opts.dataDir) {
      this.dataDir = path.resolve(this.opts.dataDir);
      await fs.mkdir(this.dataDir, { recursive: true, mode: 0o700 });
    } else {
      this.dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-nodesim-"));
      this.ownsDataDir = true;
    }
    let next = 0;
    const worker = async () => {
      while (next < this.opts.count && !this.stopCtl.signal.aborted) {
        const i = next++;
        await this.startNode(i);
        onProgress?.(this.registered.size);
      }
    };
    const workers = Math.min(this.opts.startConcurrency ?? 64, this.opts.count);
    this.starting = Promise.all(Array.from({ length: workers }, worker)).then(() => undefined);
    await this.starting;
  }

  private async startNode(i: number): Promise<void> {
    const registeredOnce = new AbortController();
    const node = new SimNode({
      name: `${this.opts.namePrefix}-${i}`,
      dataDir: this.dataDir,
      servers: this.opts.servers,
      tls: this.opts.tls,
      // Its own loopback address when the server is on this host (source_addr.ts).
      localAddress: sourceAddressFor(this.opts.servers[0] ?? "", i),
      datacenter: this.opts.datacenter ?? "dc1",
      pluginId: this.opts.pluginId,
      csi: this.opts.csi,
      stats: this.csiStats,
      log: this.opts.log,
      onRegistered: () => {
        this.registrations++;
        this.registered.add(i);
        registeredOnce.abort();
      },
      onHeartbeat: () => void this.heartbeats++,
      fingerprint: (drivers, dir, overrides) => {
        // One host, one fingerprint: every node has the same drivers and overrides, and its data
        // dir is on the simulator's file system. Each node gets its own copy.
        this.hostFingerprint ??= fingerprintNode(drivers, dir, overrides);
        return structuredClone(this.hostFingerprint);
      },
    });
    this.nodes.push(node);
    await node.start();
    // Until registered, or the wait ends, or the simulator stops.
    const wait = anySignal([registeredOnce.signal, this.stopCtl.signal], this.opts.registerWaitMs ?? 60_000);
    await sleep(2 ** 31 - 1, wait).catch(() => undefined);
  }

  counts(): NodeSimCounts {
    return {
      nodes: this.nodes.length,
      registered: this.registered.size,
      registrations: this.registrations,
      heartbeats: this.heartbeats,
      csiCalls: Object.fromEntries(this.csiStats.calls),
      injectedErrors: this.csiStats.injectedErrors,
      mounts: this.nodes.reduce((n, s) => n + (s.plugin?.mounts.size ?? 0), 0),
    };
  }

  /**
   * Stops every node. `drain`: each first stops its allocs and releases their volumes (as
   * `berth agent -dev` does on exit); otherwise the nodes simply go away, as agents that exit, and
   * the server marks them down after their TTL.
   */
  async stop(drain = false): Promise<void> {
    this.stopCtl.abort();
    await this.starting;
    await Promise.all(
      this.nodes.map((n) =>
        n
          .stop(drain)
          .catch((err: unknown) => this.opts.log.error("stopping a simulated node failed", { error: err })),
      ),
    );
    if (this.ownsDataDir) await fs.rm(this.dataDir, { recursive: true, force: true });
  }
}
