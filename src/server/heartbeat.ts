/**
 * Node liveness: every node must heartbeat within the TTL or it is marked down. Timers live in
 * memory (a heartbeat is not a state write); after a server restart every node that was ready gets
 * one TTL to reconnect. A node that expires is marked down and its unfinished allocs lost in one
 * transaction (markNodeDown); their jobs are then re-evaluated so replacements are placed (they
 * wait, blocked, until the volumewatcher has released the lost allocs' volumes).
 *
 * A busy server never marks a live node down (Nomad's leader grace, in spirit): a TTL that runs out
 * across an event-loop stall longer than `stallMs` (LoopStalls; default a quarter of the TTL) says
 * nothing about the node — its heartbeats sat unread in the socket, or its call timed out and it
 * sends the next one later — so the node gets `graceMs` more (default one TTL, the time a node gets
 * after a server restart), once per stall. Nomad adds a fixed `heartbeat_grace` (10 s) to every TTL
 * instead; berth keeps the TTL exact while the server keeps up and grants the grace when it did not.
 * Expiries that do happen go through one queue, one node at a time, yielding to the event loop
 * before each mark-down (a heartbeat read meanwhile saves the node) and evaluating each affected
 * job once per batch, so a hundred expiries are not a hundred back-to-back scheduling passes.
 *
 * A node running allocs whose group has a `lost_after` window (Nomad's disconnect strategy) is
 * `disconnected` instead, those allocs `unknown` (node_loss.ts); a timer per such node loses them
 * when their window ends with the node still silent, and a new leader arms it again from the record.
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
import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { EvalTrigger } from "../structs/eval.js";
import type { Logger } from "../internal/log.js";
import { LoopStalls } from "./loop_stall.js";
import {
  detachDownNodePlugins,
  expireUnknownAllocs,
  markNodeDown,
  nextUnknownExpiry,
  type JobRef,
} from "./node_loss.js";
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

/**
 * Nomad's failover_heartbeat_ttl: what every node that is up gets when a server becomes the
 * leader (or starts alone), before it may be marked down. The new leader has heard from no node
 * yet, and its nodes may be failing over from the server that just died or hung; five minutes is
 * Nomad's default, and only ever delays a mark-down (never a renewal the nodes count on).
 */
export const DEFAULT_FAILOVER_HEARTBEAT_TTL_MS = 5 * 60_000;

/** The grace after a stall (see the file comment); both default from the TTL. */
export interface HeartbeatGraceOptions {
  /** More time a node whose TTL ran out across a stall gets (default: the TTL; 0: no grace). */
  graceMs: number;
  /** An event-loop delay longer than this is a stall (default: a quarter of the TTL, ≥ 50 ms). */
  stallMs: number;
  /** The grace of every up node at start (default DEFAULT_FAILOVER_HEARTBEAT_TTL_MS; at least the TTL). */
  failoverMs: number;
}

/** The shortest stall that counts: below it, a garbage-collector pause or a busy tick. */
export const MIN_STALL_MS = 50;

export class HeartbeatMonitor {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** When each armed timer is due (performance.now()), to see how late it ran. */
  private readonly deadlines = new Map<string, number>();
  /** When the server last heard from each node (performance.now()). */
  private readonly heardAt = new Map<string, number>();
  /** The stall (its end) each node was last given the grace for: once per stall. */
  private readonly gracedFor = new Map<string, number>();
  /** Down nodes whose plugin instances are still on the plugin records: when to take them off. */
  private readonly detachTimers = new Map<string, NodeJS.Timeout>();
  /** Disconnected nodes: when their next unknown alloc's lost_after window ends. */
  private readonly unknownTimers = new Map<string, NodeJS.Timeout>();
  /** Expiries and detaches in flight (neither ever rejects), awaited by stop(). */
  private readonly expiring = new Set<Promise<void>>();
  /** Nodes whose TTL ran out, waiting for the expiry queue. */
  private readonly expired = new Set<string>();
  private draining = false;
  private loggedStall = Number.NEGATIVE_INFINITY;
  private readonly stalls: LoopStalls;
  readonly graceMs: number;
  private readonly failoverMs: number;
  private stopped = false;

  constructor(
    private readonly store: StateStore,
    private readonly scheduler: Reevaluator,
    readonly ttlMs: number,
    private readonly log: Logger,
    private readonly downPluginBoundMs = DEFAULT_DOWN_PLUGIN_BOUND_MS,
    grace: Partial<HeartbeatGraceOptions> = {},
  ) {
    this.graceMs = grace.graceMs ?? ttlMs;
    this.failoverMs = Math.max(ttlMs, grace.failoverMs ?? DEFAULT_FAILOVER_HEARTBEAT_TTL_MS);
    this.stalls = new LoopStalls(grace.stallMs ?? Math.max(MIN_STALL_MS, ttlMs / 4));
  }

  /**
   * Arms timers for every node the state says is up — each gets the failover grace, not one TTL:
   * heartbeats heard in an earlier term (or by an earlier process) are never judged in this one —
   * and the plugin bound of every down node whose instances are still counted (server start: the
   * bound runs from the node's StatusUpdatedAt, so a restart neither resets nor skips it).
   */
  start(): void {
    this.stalls.start();
    for (const n of this.store.listNodes()) {
      if (n.Status === "disconnected") {
        const at = nextUnknownExpiry(this.store.allocsByNode(n.ID));
        this.armUnknownExpiry(n.ID, at ?? Date.now());
      } else if (n.Status !== "down") {
        this.heardAt.set(n.ID, performance.now());
        this.arm(n.ID, this.failoverMs);
      } else if (n.CSIPluginsDetachedAt === undefined) this.armDetach(n.ID, n.StatusUpdatedAt);
    }
  }

  /** (Re)starts the node's TTL timer; a node that is alive again keeps its plugin instances. */
  reset(nodeId: string): void {
    if (this.stopped) return;
    this.stalls.start();
    clearTimeout(this.detachTimers.get(nodeId));
    this.detachTimers.delete(nodeId);
    clearTimeout(this.unknownTimers.get(nodeId));
    this.unknownTimers.delete(nodeId);
    this.heardAt.set(nodeId, performance.now());
    this.gracedFor.delete(nodeId);
    this.arm(nodeId, this.ttlMs);
  }

  /** Clears the timers and waits for the expiries in flight (server stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stalls.stop();
    for (const t of [...this.timers.values(), ...this.detachTimers.values(), ...this.unknownTimers.values()])
      clearTimeout(t);
    this.timers.clear();
    this.detachTimers.clear();
    this.unknownTimers.clear();
    this.expired.clear();
    while (this.expiring.size > 0) await Promise.allSettled([...this.expiring]);
  }

  private arm(nodeId: string, ms: number): void {
    clearTimeout(this.timers.get(nodeId));
    this.deadlines.set(nodeId, performance.now() + ms);
    const t = setTimeout(() => this.due(nodeId), ms);
    t.unref();
    this.timers.set(nodeId, t);
  }

  /**
   * The node's TTL ran out. If the server stalled since it last heard from the node (the probe saw
   * it, or this timer itself ran late), the node gets the grace, once per stall; otherwise it joins
   * the expiry queue.
   */
  private due(nodeId: string): void {
    this.timers.delete(nodeId);
    if (this.stopped) return;
    this.stalls.reportLate(this.deadlines.get(nodeId) ?? performance.now());
    this.deadlines.delete(nodeId);
    const stallEnd = this.stalls.lastStallEnd;
    const heard = this.heardAt.get(nodeId) ?? Number.NEGATIVE_INFINITY;
    if (this.graceMs > 0 && stallEnd > heard && this.gracedFor.get(nodeId) !== stallEnd) {
      this.gracedFor.set(nodeId, stallEnd);
      this.arm(nodeId, this.graceMs);
      if (this.loggedStall !== stallEnd) {
        this.loggedStall = stallEnd;
        this.log.warn(
          "the server was too busy to read heartbeats; nodes get a grace before any is marked down",
          {
            stall_ms: Math.round(this.stalls.lastStallMs),
            grace_ms: this.graceMs,
          },
        );
      }
      return;
    }
    this.expired.add(nodeId);
    if (!this.draining) {
      this.draining = true;
      this.track(this.drainExpired().finally(() => (this.draining = false)));
    }
  }

  /**
   * Marks the expired nodes down one at a time, yielding to the event loop before each (a
   * heartbeat read meanwhile re-arms the node's timer and saves it), then evaluates each job that
   * lost allocs once, yielding between passes.
   */
  private async drainExpired(): Promise<void> {
    while (!this.stopped) {
      // First a turn of the loop: the expiries due at the same moment join this batch, and the
      // heartbeats waiting to be read are read.
      await yieldToLoop();
      const batch = [...this.expired];
      this.expired.clear();
      if (batch.length === 0 || this.stopped) return;
      const jobs = new Map<string, JobRef>();
      for (const nodeId of batch) {
        if (this.stopped) return;
        // A heartbeat read since the TTL ran out re-armed the node's timer: it is alive.
        if (this.timers.has(nodeId)) continue;
        for (const j of (await this.expire(nodeId)) ?? []) jobs.set(`${j.namespace}\u0000${j.id}`, j);
        await yieldToLoop();
      }
      await this.reevaluate(jobs.values(), "node-update");
    }
  }

  /** Evaluates each job once, yielding between passes. */
  private async reevaluate(jobs: Iterable<JobRef>, trigger: EvalTrigger): Promise<void> {
    for (const j of jobs) {
      await yieldToLoop();
      if (this.stopped) return;
      try {
        await this.scheduler.evaluate(j.namespace, j.id, trigger);
      } catch (err) {
        this.log.error("re-evaluating a job after node loss failed", {
          job: j.id,
          namespace: j.namespace,
          error: err,
        });
      }
    }
  }

  /**
   * At `atMs` (wall clock, the record's time base) the disconnected node's unknown allocs whose
   * lost_after window has passed are lost, and their jobs evaluated (Nomad's
   * "max-disconnect-timeout"); the timer is armed again for the next window.
   */
  private armUnknownExpiry(nodeId: string, atMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.unknownTimers.get(nodeId));
    const t = setTimeout(
      () => {
        this.unknownTimers.delete(nodeId);
        this.track(this.expireUnknown(nodeId));
      },
      Math.max(0, atMs - Date.now()),
    );
    t.unref();
    this.unknownTimers.set(nodeId, t);
  }

  private async expireUnknown(nodeId: string): Promise<void> {
    if (this.stopped) return;
    try {
      const now = Date.now();
      const loss = await this.store.txn((tx) => expireUnknownAllocs(tx, nodeId, now));
      if (!loss) return;
      if (loss.nextExpiryMs !== undefined) this.armUnknownExpiry(nodeId, loss.nextExpiryMs);
      else this.armDetach(nodeId, now);
      if (loss.jobs.length === 0) return;
      this.log.warn("disconnected node's allocs outlived their lost_after and are lost", {
        node: nodeId,
        jobs_affected: loss.jobs.length,
      });
      await this.reevaluate(loss.jobs, "max-disconnect-timeout");
    } catch (err) {
      this.log.error("expiring a disconnected node's allocs failed", { node: nodeId, error: err });
    }
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

  /**
   * Marks the node down (or disconnected, node_loss.ts); returns the jobs whose allocs were lost or
   * became unknown (none when it was not up).
   */
  private async expire(nodeId: string): Promise<JobRef[] | null> {
    try {
      const now = Date.now();
      const loss = await this.store.txn((tx) => markNodeDown(tx, nodeId, now, "node missed its heartbeat"));
      this.heardAt.delete(nodeId);
      this.gracedFor.delete(nodeId);
      if (!loss) return null;
      if (loss.nextExpiryMs !== undefined) {
        this.armUnknownExpiry(nodeId, loss.nextExpiryMs);
        this.log.warn("node missed its heartbeat and is disconnected", {
          node: nodeId,
          jobs_affected: loss.jobs.length,
        });
        return loss.jobs;
      }
      this.armDetach(nodeId, now);
      this.log.warn("node missed its heartbeat and is down", {
        node: nodeId,
        jobs_affected: loss.jobs.length,
      });
      return loss.jobs;
    } catch (err) {
      this.log.error("marking a node down failed", { node: nodeId, error: err });
      return null;
    }
  }
}
