/**
 * Node liveness: every node must heartbeat within the TTL or it is marked down. Timers live in
 * memory (a heartbeat is not a state write); after a server restart every node that was ready gets
 * one TTL to reconnect. A node that expires is marked down and its unfinished allocs lost in one
 * transaction (markNodeDown); their jobs are then re-evaluated so replacements are placed (they
 * wait, blocked, until the volumewatcher has released the lost allocs' volumes).
 */
import type { EvalTrigger } from "../structs/eval.js";
import type { Logger } from "../internal/log.js";
import { markNodeDown } from "./node_loss.js";
import type { StateStore } from "./state/store.js";

/** What node loss needs from the scheduler. */
export interface Reevaluator {
  evaluate(namespace: string, id: string, trigger?: EvalTrigger): Promise<unknown>;
}

export class HeartbeatMonitor {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Expiries in flight (expire() never rejects), awaited by stop(). */
  private readonly expiring = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly store: StateStore,
    private readonly scheduler: Reevaluator,
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
      const p: Promise<void> = this.expire(nodeId).finally(() => this.expiring.delete(p));
      this.expiring.add(p);
    }, this.ttlMs);
    t.unref();
    this.timers.set(nodeId, t);
  }

  /** Clears the timers and waits for the expiries in flight (server stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    while (this.expiring.size > 0) await Promise.allSettled([...this.expiring]);
  }

  private async expire(nodeId: string): Promise<void> {
    if (this.stopped) return;
    try {
      const lost = await this.store.txn((tx) =>
        markNodeDown(tx, nodeId, Date.now(), "node missed its heartbeat"),
      );
      if (!lost) return;
      this.log.warn("node missed its heartbeat and is down", { node: nodeId, jobs_affected: lost.length });
      for (const j of lost) await this.scheduler.evaluate(j.namespace, j.id, "node-update");
    } catch (err) {
      this.log.error("marking a node down failed", { node: nodeId, error: err });
    }
  }
}
