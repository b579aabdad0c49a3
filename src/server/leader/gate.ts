/**
 * The leader gate: the loops only the leader may run (node liveness, the scheduler's start-up
 * pass over blocked evals, the volumewatcher, the drainer, the deployment watcher, GC, the orphan
 * reconciler) are started when this server gains leadership and stopped — each awaited — when it
 * loses it (the scheduler's blocked set and follow-up timers are dropped then: loops.ts). Transitions run one at a time in the order they were asked for, so a loss during a
 * start waits for the start to finish and then stops everything it started.
 *
 * Each term gets fresh loops from `build()`: a loop never carries memory from an earlier term (the
 * store is the truth; each loop resumes from it, e.g. the volumewatcher from each claim's
 * checkpoint). A single server without etcd gains once at start and never loses.
 */
import type { Logger } from "../../internal/log.js";

export interface LeaderLoop {
  readonly name: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

export type GateState = "follower" | "starting" | "leader" | "stopping";

export class LeaderGate {
  private chain: Promise<void> = Promise.resolve();
  private running: LeaderLoop[] = [];
  private stateNow: GateState = "follower";
  private since: number | null = null;
  private readonly listeners = new Set<(state: GateState) => void>();
  private closed = false;

  constructor(
    private readonly build: () => LeaderLoop[],
    private readonly log: Logger,
  ) {}

  get state(): GateState {
    return this.stateNow;
  }

  /** When the current term's loops were all running (Date.now()); null unless leader. */
  get leaderSince(): number | null {
    return this.since;
  }

  /** Called on every state change (tests and the failover benchmark wait on it). */
  onChange(listener: (state: GateState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the leader's loops (after any transition in flight). */
  gain(): Promise<void> {
    return this.enqueue(async () => {
      if (this.closed || this.running.length > 0 || this.stateNow === "leader") return;
      this.set("starting");
      const loops = this.build();
      for (const loop of loops) {
        try {
          await loop.start();
          this.running.push(loop);
        } catch (err) {
          this.log.error("a leader loop failed to start", { loop: loop.name, error: err });
          this.running.push(loop);
        }
      }
      this.since = Date.now();
      this.set("leader");
      this.log.info("leader loops running", { loops: loops.map((l) => l.name) });
    });
  }

  /**
   * Stops the leader's loops in the order they started, each awaited: node liveness first, so no
   * node is marked down while the rest stop, as the server's own stop has always done.
   */
  lose(reason: string): Promise<void> {
    return this.enqueue(async () => {
      if (this.running.length === 0 && this.stateNow === "follower") return;
      this.set("stopping");
      for (const loop of this.running.splice(0)) {
        try {
          await loop.stop();
        } catch (err) {
          this.log.error("a leader loop failed to stop", { loop: loop.name, error: err });
        }
      }
      this.since = null;
      this.set("follower");
      this.log.info("leader loops stopped", { reason });
    });
  }

  /** Server stop: stops the loops and never starts them again. */
  close(reason: string): Promise<void> {
    this.closed = true;
    return this.lose(reason);
  }

  /** Resolves once every transition asked for so far has finished. */
  settled(): Promise<void> {
    return this.chain;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.chain.then(step, step);
    this.chain = next.catch(() => undefined);
    return this.chain;
  }

  private set(state: GateState): void {
    this.stateNow = state;
    for (const l of this.listeners) l(state);
  }
}
