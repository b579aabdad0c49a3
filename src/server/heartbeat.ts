/**
 * Node liveness: every node must heartbeat within the TTL or it is marked down. Timers live in
 * memory (a heartbeat is not a state write); after a server restart every node that was ready gets
 * one TTL to reconnect. What happens to a down node's allocs and claims is the node-loss flow's job.
 */
import type { Logger } from "../internal/log.js";
import type { StateStore } from "./state/store.js";

export class HeartbeatMonitor {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly store: StateStore,
    readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  /** Arms timers for every node the state says is up (server start). */
  start(): void {
    for (const n of this.store.listNodes()) {
      if (n.Status !== "down") this.reset(n.ID);
    }
  }

  /** (Re)starts the node's TTL timer. */
  reset(nodeId: string): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(nodeId));
    const t = setTimeout(() => {
      this.timers.delete(nodeId);
      void this.expire(nodeId);
    }, this.ttlMs);
    t.unref();
    this.timers.set(nodeId, t);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private async expire(nodeId: string): Promise<void> {
    try {
      await this.store.txn((tx) => {
        const node = tx.getNode(nodeId);
        if (!node || node.Status === "down") return;
        tx.putNode({
          ...node,
          Status: "down",
          StatusDescription: "node missed its heartbeat",
          StatusUpdatedAt: Date.now(),
        });
      });
      this.log.warn("node missed its heartbeat and is down", { node: nodeId });
    } catch (err) {
      this.log.error("marking a node down failed", { node: nodeId, error: err });
    }
  }
}
