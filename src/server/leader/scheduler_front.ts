/**
 * The scheduler as the endpoints of a server in an etcd cluster see it (`deps.scheduler`): only
 * the leader runs passes, so the blocked set and the follow-up timers live in one place, as
 * Nomad's leader alone runs the eval broker and the blocked-evals tracker.
 *
 * - On the leader, every call runs on the local scheduler.
 * - On a follower, `evaluate` is sent to the leader (scheduler_forward.ts) and answers the
 *   leader's result; the follower then waits (briefly) until its own replica shows the leader's
 *   writes, so a caller that reads the eval back from this server finds it.
 * - `retryBlocked` (a node registered, a claim was freed, a volume appeared) is sent to the leader
 *   without the caller waiting; the triggers of one turn of the event loop, and all those that
 *   arrive while one is on its way, go as one more call.
 * - No leader known, the leader unreachable, or a server that answers it no longer leads: the call
 *   is tried again with a short backoff, re-reading who leads, for `holdMs` (Nomad's
 *   RPCHoldTimeout; about the lease TTL + a margin, so a new leader is elected meanwhile), then
 *   fails with ERR_NO_LEADER "No cluster leader". A retry-blocked that fails is logged: the next
 *   leader's start-up pass runs every blocked job anyway.
 *
 * The deadline of a call already sent (issue 28: a write through a healthy follower hung while the
 * old leader was SIGSTOPped). The rule that tells a long pass on a live leader from a leader that
 * will never answer is *who leads*, not a clock: while the send is in flight the follower re-reads
 * its view of the leader every LEADER_CHECK_MS, and the send lives exactly as long as the server
 * it went to is still the leader of the same term in that view (its etcd lease kept alive, which a
 * paused, hung or cut-off leader cannot do for longer than the lease TTL). When the view changes
 * or empties, the send is aborted at once and the call goes to the new leader, within the hold;
 * once the hold has passed it fails with ERR_NO_LEADER. So a paused leader costs a caller at most
 * about the lease TTL (the lease running out) plus the new election — within `holdMs` — while a
 * healthy leader that still leads may take its pass's own time (up to EVALUATE_TIMEOUT_MS), the
 * hold notwithstanding. The follower's view itself goes blank when its own etcd session is not
 * confirmed fresh (election.ts `leader`), so a follower cut off from etcd fails within the hold
 * too.
 *
 * Each call that did not run here is counted, by op and outcome (`ok`, `no_leader`, `error`):
 *
 *   berth.server.scheduler.forwarded  {op, outcome}  counter: calls sent to the leader
 *
 * A single server without etcd has no front: its endpoints call its Scheduler directly.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { EvalTrigger } from "../../structs/eval.js";
import { BerthError, isBerthError } from "../../structs/errors.js";
import { isAbortError, sleep } from "../../internal/abort.js";
import { backoffDelay } from "../../internal/backoff.js";
import type { Logger } from "../../internal/log.js";
import type { CounterMetric, Telemetry } from "../../internal/metrics/telemetry.js";
import type { JobScheduler } from "../deps.js";
import type { EvalOptions, EvalResult } from "../scheduler/evaluate_in.js";
import type { Wake } from "../scheduler/blocked_wait.js";
import { awaitIndex, type IndexedStore } from "./await_index.js";
import type { ServerMember } from "./keys.js";
import { wireOptions, type SchedulerCall, type SchedulerPeer } from "./scheduler_forward.js";

/** What the front reads of the cluster (leader/cluster.ts), each time it routes a call. */
export interface LeaderRoute {
  readonly isLeader: boolean;
  readonly self: ServerMember;
  /** `sinceMs` names the term (it changes with each new leader key); absent in unit fakes. */
  leader(): { member: ServerMember; sinceMs?: number } | null;
  readonly schedulerPeer: SchedulerPeer;
}

export interface FrontOptions {
  /** How long a call waits for a leader before ERR_NO_LEADER. */
  holdMs: number;
  /** Backoff between tries (defaults 50 ms doubling to 500 ms). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Where the forwarded counter is registered (absent: not counted; unit tests). */
  telemetry?: Telemetry;
}

/** The hold for a lease TTL: a dead leader's lease runs out and a new one is elected within it. */
export function holdForLeaseTtl(ttlSec: number): number {
  return ttlSec * 1000 + 2_000;
}

/** The least time an answer waits for this server's replica to show the leader's eval. */
const MIN_CATCH_UP_MS = 250;

/** How often a follower re-reads who leads while its call is with the leader. */
export const LEADER_CHECK_MS = 100;

/** The route could not reach a leader this try (thrown inside the retry loop only). */
class NoLeaderYet extends Error {}

type Leader = { member: ServerMember; sinceMs?: number };

export class SchedulerFront implements JobScheduler {
  private readonly closed = new AbortController();
  private forwarding: Promise<void> | null = null;
  private forwardAgain = false;
  private readonly forwarded: CounterMetric<"op" | "outcome"> | undefined;

  constructor(
    private readonly local: JobScheduler,
    /** The cluster once this server joined it; undefined before (no leader known yet). */
    private readonly route: () => LeaderRoute | undefined,
    private readonly store: IndexedStore,
    private readonly opts: FrontOptions,
    private readonly log: Logger,
  ) {
    this.forwarded = opts.telemetry?.counter(
      ["server", "scheduler", "forwarded"],
      "Scheduler calls this server sent to the leader, by op (evaluate, retry-blocked) and outcome (ok, no_leader, error).",
      ["op", "outcome"],
    );
  }

  async evaluate(
    namespace: string,
    id: string,
    trigger: EvalTrigger = "job-register",
    opts: EvalOptions = {},
  ): Promise<EvalResult> {
    const minIndex = this.store.index();
    const call: SchedulerCall = {
      Op: "evaluate",
      Namespace: namespace,
      JobID: id,
      Trigger: trigger,
      Options: wireOptions(opts),
      MinIndex: minIndex,
    };
    const sent = await this.toLeader(
      () => call,
      async () => ({ local: await this.local.evaluate(namespace, id, trigger, opts) }),
    );
    if ("local" in sent) return sent.local;
    const result = sent.remote;
    if (result === null) throw new BerthError("ERR_INTERNAL", "the leader answered no pass result");
    // Read-your-writes on this server: the eval the answer names is in its replica (bounded:
    // an answer is never held back long by a slow replica, nor past the hold by much).
    const catchUpMs = Math.max(sent.holdUntil - Date.now(), MIN_CATCH_UP_MS);
    await awaitIndex(this.store, result.index, catchUpMs, this.closed.signal).catch(() => false);
    return result;
  }

  /** On a follower the wakes are not sent: the leader wakes every blocked job (a pass too many at most). */
  retryBlocked(wakes?: readonly Wake[]): Promise<void> {
    if (this.route()?.isLeader) return this.local.retryBlocked(wakes);
    if (this.forwarding) {
      this.forwardAgain = true;
      return this.forwarding;
    }
    this.forwarding = (async () => {
      do {
        // The other triggers of this turn (a node's register touches several) ride along: only
        // those that come once the call is built ask for one more.
        await yieldToLoop();
        this.forwardAgain = false;
        await this.sendRetry();
      } while (this.forwardAgain && !this.closed.signal.aborted);
    })().finally(() => {
      this.forwarding = null;
    });
    return this.forwarding;
  }

  /** Server stop: calls waiting for a leader fail with ERR_ABORTED; a pending retry is dropped. */
  async close(): Promise<void> {
    this.closed.abort();
    await this.forwarding;
  }

  private async sendRetry(): Promise<void> {
    try {
      await this.toLeader(
        () => ({ Op: "retry-blocked", MinIndex: this.store.index() }),
        async () => {
          await this.local.retryBlocked();
          return { local: undefined };
        },
      );
    } catch (err) {
      if (this.closed.signal.aborted) return;
      this.log.warn("could not ask the leader to retry blocked jobs; the next leader retries them", {
        error: err,
      });
    }
  }

  /**
   * Runs `here` when this server leads, else sends the call to the leader; tries again while no
   * leader is reachable, for the hold time. Errors of the pass itself (local or on the leader)
   * are the caller's, as they are.
   */
  private async toLeader<T>(
    call: () => SchedulerCall,
    here: () => Promise<{ local: T }>,
  ): Promise<{ local: T } | { remote: EvalResult | null; holdUntil: number }> {
    const signal = this.closed.signal;
    const op = call().Op;
    const holdUntil = Date.now() + this.opts.holdMs;
    let why: string;
    let outcome: "ok" | "no_leader" | "error" | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        if (signal.aborted) throw new BerthError("ERR_ABORTED", "the server is stopping");
        const r = this.route();
        if (r?.isLeader) return await here();
        const leader = r?.leader();
        if (!r || !leader || leader.member.ID === r.self.ID) {
          why = "no server leads the cluster";
        } else {
          try {
            const remote = await this.sendWhileLeading(r, leader, call());
            outcome = "ok";
            return { remote, holdUntil };
          } catch (err) {
            if (!(err instanceof NoLeaderYet)) {
              outcome = "error";
              throw err;
            }
            why = err.message;
          }
        }
        const wait = Math.min(
          backoffDelay(attempt, this.opts.retryBaseMs ?? 50, this.opts.retryMaxMs ?? 500),
          holdUntil - Date.now(),
        );
        if (wait <= 0) {
          outcome = "no_leader";
          throw new BerthError(
            "ERR_NO_LEADER",
            `No cluster leader (waited ${(this.opts.holdMs / 1000).toFixed(1)} s; last: ${why})`,
          );
        }
        await sleep(wait, signal);
      }
    } catch (err) {
      if (signal.aborted && isAbortError(err)) {
        throw new BerthError("ERR_ABORTED", "the server is stopping", { cause: err });
      }
      throw err;
    } finally {
      if (outcome !== undefined) this.forwarded?.inc({ op, outcome });
    }
  }

  /**
   * Sends `call` to `leader`; the send is aborted as soon as this server's view of the leader no
   * longer names that server in that term (the file comment's rule). A leader that cannot be
   * reached, answers that it no longer leads, or stopped leading meanwhile is NoLeaderYet.
   */
  private async sendWhileLeading(
    r: LeaderRoute,
    leader: Leader,
    call: SchedulerCall,
  ): Promise<EvalResult | null> {
    const moved = new AbortController();
    const check = setInterval(() => {
      const now = this.route()?.leader();
      if (!now || now.member.ID !== leader.member.ID || now.sinceMs !== leader.sinceMs) {
        moved.abort(new NoLeaderYet(`${leader.member.Name} at ${leader.member.HTTPAddr} stopped leading`));
      }
    }, LEADER_CHECK_MS);
    try {
      return await r.schedulerPeer.send(
        leader.member.HTTPAddr,
        call,
        AbortSignal.any([this.closed.signal, moved.signal]),
      );
    } catch (err) {
      if (moved.signal.aborted && !this.closed.signal.aborted) throw moved.signal.reason as NoLeaderYet;
      if (isBerthError(err) && (err.code === "ERR_NO_LEADER" || err.code === "ERR_RPC_UNAVAILABLE")) {
        throw new NoLeaderYet(`${leader.member.Name} at ${leader.member.HTTPAddr}: ${err.message}`);
      }
      throw err;
    } finally {
      clearInterval(check);
    }
  }
}
