/**
 * The leader gate: the loops only the leader may run (node liveness, the scheduler's start-up
 * pass over blocked evals, the volumewatcher, the drainer, the deployment watcher, GC, the orphan
 * reconciler, the controller condition poll) are started when this server gains leadership and
 * stopped — each awaited — when it loses it (the scheduler's blocked set and follow-up timers are
 * dropped then: loops.ts).
 *
 * Fenced by term (docs/design.md): each term has a LeaderTerm — an AbortSignal and a Fence
 * (internal/fence.ts). `lose()` aborts the term's signal at once, in the call, never queued behind
 * an unfinished start; a start still running is then no longer awaited (its loop's `start` is
 * expected to end soon on the signal, e.g. the scheduler's start-up pass checks it between jobs),
 * the loops not yet started are never started, and those that started (or were starting) are
 * stopped. Every loop's `start` runs inside the term's fence, so every server→node call its work
 * makes (controller calls, node calls, orphan listings, the condition poll) is refused from the
 * moment the term ended — or, before the election notices, from the moment the term's `valid`
 * check fails (the server's etcd session is no longer confirmed fresh: a paused leader resuming).
 *
 * Transitions (gain, the stop half of lose) still run one at a time in the order they were asked
 * for; since a start that lost its term returns at once, the next term's gain waits only for the
 * stops, never for the old start to finish. Starts that outlived their term are kept in
 * `lingering` and awaited by close() alone (the server must not close its store under them).
 *
 * Each term gets fresh loops from `build()`: a loop never carries memory from an earlier term (the
 * store is the truth; each loop resumes from it, e.g. the volumewatcher from each claim's
 * checkpoint). A single server without etcd gains once at start and never loses.
 */
import { runFenced, type Fence } from "../../internal/fence.js";
import type { Logger } from "../../internal/log.js";

/** One term as leader, as its loops see it. */
export interface LeaderTerm {
  /** The leader key's create revision ("" for a single server without etcd). */
  readonly revision: string;
  /** Aborted the moment this server stops leading (lose or close). */
  readonly signal: AbortSignal;
  /** Holds while the term lasts and its session is confirmed fresh; every loop runs inside it. */
  readonly fence: Fence;
}

export interface LeaderLoop {
  readonly name: string;
  start(term: LeaderTerm): void | Promise<void>;
  stop(): Promise<void>;
}

/** What the election knows of a term when it is won. */
export interface TermSource {
  revision: string;
  /** Why the term can no longer act (its session not confirmed fresh), or undefined while it can. */
  refusal?: () => string | undefined;
}

export type GateState = "follower" | "starting" | "leader" | "stopping";

export class LeaderGate {
  private chain: Promise<void> = Promise.resolve();
  private running: LeaderLoop[] = [];
  private stateNow: GateState = "follower";
  private since: number | null = null;
  private readonly listeners = new Set<(state: GateState) => void>();
  private closed = false;
  /** The term asked for last (by gain), until lose ends it. */
  private current: AbortController | null = null;
  /** What the election said of the current term (restart begins a new term on it). */
  private source: TermSource | null = null;
  /** Starts whose term ended before they did (close awaits them). */
  private readonly lingering = new Set<Promise<void>>();

  constructor(
    private readonly build: (term: LeaderTerm) => LeaderLoop[],
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

  /** Starts the leader's loops for a new term (after any transition in flight). */
  gain(source: TermSource = { revision: "" }): Promise<void> {
    if (this.closed || this.current) return this.enqueue(async () => undefined);
    const ctl = new AbortController();
    this.current = ctl;
    this.source = source;
    const signal = ctl.signal;
    const fence: Fence = {
      refusal: () =>
        signal.aborted
          ? `leader term ${source.revision || "(single server)"} ended (${String(signal.reason)})`
          : source.refusal?.(),
    };
    const term: LeaderTerm = { revision: source.revision, signal, fence };
    return this.enqueue(() => this.startTerm(term));
  }

  /**
   * Ends the term at once (its signal aborts in this call), then stops the leader's loops in the
   * order they started, each awaited: node liveness first, so no node is marked down while the
   * rest stop, as the server's own stop has always done.
   */
  lose(reason: string): Promise<void> {
    this.current?.abort(reason);
    this.current = null;
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

  /**
   * Ends the current term and begins another on the same election term at once (a snapshot
   * restore replaced the state under the loops: they follow it by deltas, so each starts afresh
   * from the store, as after a leader change). Nothing when this server does not lead.
   */
  async restart(reason: string): Promise<void> {
    const source = this.source;
    if (!this.current || !source || this.closed) return;
    // Asked for back to back, in one turn: an election's lose after this ends the new term.
    const stopped = this.lose(reason);
    const started = this.gain(source);
    await Promise.all([stopped, started]);
  }

  /** Server stop: stops the loops, never starts them again, and waits for starts left running. */
  async close(reason: string): Promise<void> {
    this.closed = true;
    await this.lose(reason);
    while (this.lingering.size > 0) await Promise.allSettled([...this.lingering]);
  }

  /** Resolves once every transition asked for so far has finished. */
  settled(): Promise<void> {
    return this.chain;
  }

  private async startTerm(term: LeaderTerm): Promise<void> {
    const { signal } = term;
    if (this.closed || signal.aborted) return;
    this.set("starting");
    const loops = this.build(term);
    for (const loop of loops) {
      if (signal.aborted) break;
      // Stopped with the others even if its start does not end before the term does.
      this.running.push(loop);
      const started = this.startOne(loop, term);
      if (!(await untilAborted(started, signal))) {
        this.lingering.add(started);
        void started.finally(() => this.lingering.delete(started));
        break;
      }
    }
    if (signal.aborted) {
      this.log.info("leader term ended during its start", {
        term: term.revision,
        started: this.running.length,
      });
      return;
    }
    this.since = Date.now();
    this.set("leader");
    this.log.info("leader loops running", { loops: loops.map((l) => l.name) });
  }

  /** The loop's start inside the term's fence; never rejects (a failure is logged). */
  private startOne(loop: LeaderLoop, term: LeaderTerm): Promise<void> {
    return runFenced(term.fence, async () => {
      try {
        await loop.start(term);
      } catch (err) {
        if (!term.signal.aborted)
          this.log.error("a leader loop failed to start", { loop: loop.name, error: err });
      }
    });
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

/** True when `p` settled first, false when `signal` aborted first. */
function untilAborted(p: Promise<void>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
  });
}
