/**
 * Node liveness: every node must heartbeat within the TTL or it is marked down. Timers live in
 * memory (a heartbeat is not a state write); after a server restart every node that was ready gets
 * one TTL to reconnect. A node that expires is marked down and its unfinished allocs lost in one
 * transaction (markNodeDown); their jobs are then re-evaluated so replacements are placed (they
 * wait, blocked, until the volumewatcher has released the lost allocs' volumes).
 *
 * A node that stays down for `downPluginBoundMs` has its plugin instances taken off the plugin
 * records (detachDownNodePlugins), so a departed controller or node plugin does not stay listed
 * until the node is garbage collected (24 h). Its entries never gated claims even before (the
 * plugin record does not read a down node's instances for what the plugin requires); the bound
 * is about what the records say and when an empty plugin can go. Nomad keeps a down node's
 * instances until the node is collected or its plugin allocs are stopped; berth chooses a short
 * bound (DEFAULT_DOWN_PLUGIN_BOUND_MS) because an instance nothing can reach is of no use to the
 * scheduler, the claim path or the operator reading `plugin status`.
 */
import type { EvalTrigger } from "../structs/eval.js";
import type { Logger } from "../internal/log.js";
import { detachDownNodePlugins, markNodeDown } from "./node_loss.js";
import type { StateStore } from "./state/store.js";

/** What node loss needs from the scheduler. */
export interface Reevaluator {
  evaluate(namespace: string, id: string, trigger?: EvalTrigger): Promise<unknown>;
}

/**
 * How long a down node keeps its plugin instances on the plugin records: five minutes rides out an
 * agent restart or a short network cut (the entries stay visible, as unhealthy, "node is down"),
 * and is short next to the 24 h after which the node record itself is collected.
 */
export const DEFAULT_DOWN_PLUGIN_BOUND_MS = 5 * 60_000;

export class HeartbeatMonitor {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Down nodes whose plugin instances are still on the plugin records: when to take them off. */
  private readonly detachTimers = new Map<string, NodeJS.Timeout>();
  /** Expiries and detaches in flight (neither ever rejects), awaited by stop(). */
  private readonly expiring = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly store: StateStore,
    private readonly scheduler: Reevaluator,
    readonly ttlMs: number,
    private readonly log: Logger,
    private readonly downPluginBoundMs = DEFAULT_DOWN_PLUGIN_BOUND_MS,
  ) {}

  /**
   * Arms timers for every node the state says is up, and the plugin bound of every down node whose
   * instances are still counted (server start: the bound runs from the node's StatusUpdatedAt, so
   * a restart neither resets nor skips it).
   */
  start(): void {
    for (const n of this.store.listNodes()) {
      if (n.Status !== "down") this.reset(n.ID);
      else if (n.CSIPluginsDetachedAt === undefined) this.armDetach(n.ID, n.StatusUpdatedAt);
    }
  }

  /** (Re)starts the node's TTL timer; a node that is alive again keeps its plugin instances. */
  reset(nodeId: string): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(nodeId));
    clearTimeout(this.detachTimers.get(nodeId));
    this.detachTimers.delete(nodeId);
    const t = setTimeout(() => {
      this.timers.delete(nodeId);
      this.track(this.expire(nodeId));
    }, this.ttlMs);
    t.unref();
    this.timers.set(nodeId, t);
  }

  /** Clears the timers and waits for the expiries in flight (server stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of [...this.timers.values(), ...this.detachTimers.values()]) clearTimeout(t);
    this.timers.clear();
    this.detachTimers.clear();
    while (this.expiring.size > 0) await Promise.allSettled([...this.expiring]);
  }

  /** Takes the down node's plugin instances off the records `downPluginBoundMs` after `downAtMs`. */
  private armDetach(nodeId: string, downAtMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.detachTimers.get(nodeId));
    const t = setTimeout(
      () => {
        this.detachTimers.delete(nodeId);
        this.track(this.detach(nodeId));
      },
      Math.max(0, downAtMs + this.downPluginBoundMs - Date.now()),
    );
    t.unref();
    this.detachTimers.set(nodeId, t);
  }

  private track(work: Promise<void>): void {
    const p: Promise<void> = work.finally(() => this.expiring.delete(p));
    this.expiring.add(p);
  }

  private async detach(nodeId: string): Promise<void> {
    if (this.stopped) return;
    try {
      const done = await this.store.txn((tx) =>
        detachDownNodePlugins(tx, nodeId, Date.now(), this.downPluginBoundMs),
      );
      if (done) {
        this.log.info("down node's plugin instances removed from the plugin records", { node: nodeId });
        return;
      }
      // A timer that fired a little early (clock granularity) tries again at the bound.
      const n = this.store.getNode(nodeId);
      if (n?.Status === "down" && n.CSIPluginsDetachedAt === undefined)
        this.armDetach(nodeId, n.StatusUpdatedAt);
    } catch (err) {
      this.log.error("removing a down node's plugin instances failed", { node: nodeId, error: err });
    }
  }

  private async expire(nodeId: string): Promise<void> {
    if (this.stopped) return;
    try {
      const now = Date.now();
      const lost = await this.store.txn((tx) => markNodeDown(tx, nodeId, now, "node missed its heartbeat"));
      if (!lost) return;
      this.armDetach(nodeId, now);
      this.log.warn("node missed its heartbeat and is down", { node: nodeId, jobs_affected: lost.length });
      for (const j of lost) await this.scheduler.evaluate(j.namespace, j.id, "node-update");
    } catch (err) {
      this.log.error("marking a node down failed", { node: nodeId, error: err });
    }
  }
}
