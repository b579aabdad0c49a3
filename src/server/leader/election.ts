/**
 * Leadership through etcd: one leader at a time among the servers of a cluster.
 *
 * Each server holds a *session*: an etcd lease of `ttlSec` it keeps alive itself, with its member
 * record bound to it (keys.ts). It campaigns by creating the leader
 * key bound to that lease in a transaction that succeeds only when the key is absent (create
 * revision 0); the winner's create revision names its term. Losers watch the key and campaign
 * again as soon as it is deleted (the leader resigned or its lease expired), and at least once per
 * TTL in case a watch event was missed.
 *
 * Never two leaders: etcd keeps a lease at least `ttlSec` past the moment it received the last
 * keepalive, which is after the moment this server *sent* it; so the lease (and the leader key)
 * cannot expire before `sentAt + ttl`. A leader that has not had a keepalive confirmed steps down
 * locally at `sentAt + ttl − STEP_DOWN_MARGIN_MS`, before any other server can win. A keepalive
 * answered "lease not found", or a change of the leader key it did not make, ends leadership at
 * once. After a step-down the session is thrown away and a new one (a new lease) is made.
 *
 * Keepalives for a busy host: one is sent every ttl/6 whether or not the ones before it have
 * answered, and each may take until the step-down deadline (not a fixed ttl/3), so one slow answer
 * (a busy etcd, a loaded 2-core machine) costs nothing as long as some keepalive sent in the
 * window is confirmed before the deadline; only a lease etcd has not confirmed for
 * ttl − STEP_DOWN_MARGIN_MS ends the term.
 *
 * Fences (internal/fence.ts, gate.ts): `termRefusal(revision)` and `sessionRefusal(leaseId)` say
 * whether the term, or the session a volume lock was taken in, still holds *now* by the same rule
 * as the step-down — so a leader that resumes from a pause longer than its lease refuses to send
 * before its keepalive loop has even run, and before another server can have taken over.
 *
 * A killed leader's lease runs out `ttlSec` after its last keepalive; the watchers see the key
 * deleted and one of them wins: kill → new leader takes about the TTL (3 s by default).
 */
import { randomInt } from "node:crypto";
import { EtcdLeaseInvalidError, type Etcd3, type IKeyValue, type Lease, type Watcher } from "etcd3";
import { sleep } from "../../internal/abort.js";
import { backoffDelay } from "../../internal/backoff.js";
import type { Logger } from "../../internal/log.js";
import { parseMember, type HaKeys, type ServerMember } from "./keys.js";

/** The default lease TTL: a killed leader is replaced in about this long. */
export const DEFAULT_LEASE_TTL_SEC = 3;
/** How long before the lease can expire at the earliest the leader gives up on its own. */
export const STEP_DOWN_MARGIN_MS = 600;
/** Keepalives per lease TTL (each may take until the step-down deadline). */
const KEEPALIVES_PER_TTL = 6;

/** A leadership term: the leader key's create revision, and when this server saw it begin. */
export interface Term {
  revision: string;
  sinceMs: number;
}

/** Who leads, as this server last saw it. */
export interface KnownLeader {
  member: ServerMember;
  term: Term;
}

export interface ElectionOptions {
  client: Etcd3;
  keys: HaKeys;
  self: ServerMember;
  ttlSec?: number;
  log: Logger;
  /** This server became the leader (called once per term, never twice without onLose between). */
  onGain: (term: Term) => void;
  /** This server is no longer the leader (it resigned, its lease was lost, or it is stopping). */
  onLose: (reason: string) => void;
}

export class LeaderElection {
  private readonly ttlMs: number;
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;
  private lease: Lease | null = null;
  private leaseId = "";
  /** When the last keepalive that etcd confirmed was sent (Date.now()). */
  private confirmedSentAt = 0;
  private term: Term | null = null;
  private known: KnownLeader | null = null;
  private watching = false;
  private watcher: Watcher | null = null;
  private readonly wakers = new Set<() => void>();
  private sessionLost: ((reason: string) => void) | null = null;
  /** Why the last session ended (logged with the end of a term). */
  private lostReason = "lease lost";
  /** Called with each new session's lease ID, once granted (the node directory re-binds to it). */
  onSession: ((leaseId: string) => void) | null = null;

  constructor(private readonly opts: ElectionOptions) {
    this.ttlMs = (opts.ttlSec ?? DEFAULT_LEASE_TTL_SEC) * 1000;
  }

  /**
   * Whether this server leads *now*: its term, with its session confirmed fresh (so a leader that
   * resumes from a pause neither runs a forwarded pass nor reports itself before its keepalive loop
   * has even run; the gate's loops are fenced the same way: termRefusal).
   */
  get isLeader(): boolean {
    return this.term !== null && this.staleness() === undefined;
  }

  /** The current term when this server leads. */
  get currentTerm(): Term | null {
    return this.term;
  }

  /**
   * The leader this server knows of (itself included); null while there is none or it cannot
   * tell: its view counts only while its watch is up and its own lease is confirmed as fresh as a
   * leader's must be (an etcd that stopped answering leaves a watch open but silent), so a
   * follower stops reporting a leader no later than that leader steps down.
   */
  get leader(): KnownLeader | null {
    if (this.term) return this.staleness() === undefined ? { member: this.opts.self, term: this.term } : null;
    const inContact = this.watching && Date.now() < this.confirmedSentAt + this.ttlMs - STEP_DOWN_MARGIN_MS;
    return inContact ? this.known : null;
  }

  /**
   * Milliseconds since etcd last confirmed this server's lease (Nomad's X-Nomad-LastContact: how
   * old this server's view of the leader may be); 0 on the leader and before the first session.
   */
  get lastContactMs(): number {
    if (this.term || this.confirmedSentAt === 0) return 0;
    return Math.max(0, Date.now() - this.confirmedSentAt);
  }

  /**
   * Why the term `revision` may no longer act, or undefined while it may: it must still be this
   * server's term, and its session confirmed fresh (the step-down rule, checked against the clock
   * now rather than when the keepalive loop last ran).
   */
  termRefusal(revision: string): string | undefined {
    if (this.term?.revision !== revision) return `leader term ${revision} is over`;
    return this.staleness();
  }

  /** Why a lock taken under the session `leaseId` no longer counts as held, or undefined. */
  sessionRefusal(leaseId: string): string | undefined {
    if (leaseId === "" || this.leaseId !== leaseId) return "the etcd session it was taken in is over";
    return this.staleness();
  }

  private staleness(): string | undefined {
    const age = Date.now() - this.confirmedSentAt;
    return age < this.ttlMs - STEP_DOWN_MARGIN_MS
      ? undefined
      : `this server's etcd lease was last confirmed ${age} ms ago (TTL ${this.ttlMs} ms)`;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Resigns: ends leadership (onLose first), revokes the lease so the leader key and this
   * server's registrations vanish at once and another server takes over without waiting a TTL.
   */
  async stop(): Promise<void> {
    this.stopped.abort();
    this.sessionLost?.("server stopping");
    await this.loop;
    await this.watcher?.cancel().catch(() => undefined);
    this.watcher = null;
  }

  private async run(): Promise<void> {
    const signal = this.stopped.signal;
    await this.observe();
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        await this.session(signal);
        attempt = 0;
      } catch (err) {
        this.lostReason = `etcd: ${(err as Error).message}`;
        if (!signal.aborted) this.opts.log.warn("leader election session failed", { error: err });
      } finally {
        this.endTerm(signal.aborted ? "server stopping" : this.lostReason);
        await this.revoke();
      }
      if (!signal.aborted) await sleep(backoffDelay(attempt, 200, 2_000), signal).catch(() => undefined);
    }
  }

  /** One lease: register, keep it alive, campaign; resolves when the lease is lost or on stop. */
  private async session(signal: AbortSignal): Promise<void> {
    const { client, keys, self } = this.opts;
    const over = new AbortController();
    const onStop = () => over.abort(new Error("server stopping"));
    signal.addEventListener("abort", onStop, { once: true });
    const lose = (reason: string): void => {
      if (!over.signal.aborted) over.abort(new Error(reason));
      for (const w of this.wakers) w();
    };
    this.sessionLost = lose;
    const lease = client.lease(this.ttlMs / 1000, { autoKeepAlive: false });
    // Loss is seen through keepaliveOnce's own answers; the event is only kept from going unheard.
    lease.on("lost", () => undefined);
    this.lease = lease;
    try {
      const sentAt = Date.now();
      this.leaseId = await lease.grant();
      this.confirmedSentAt = sentAt;
      await client
        .put(keys.servers + self.ID)
        .value(JSON.stringify(self))
        .lease(this.leaseId);
      this.onSession?.(this.leaseId);
      const keepalive = this.keepalive(lease, over);
      try {
        await this.campaign(over.signal);
      } finally {
        lose("session over");
        await keepalive;
      }
      const why = over.signal.reason as Error | undefined;
      if (!signal.aborted) this.lostReason = why?.message ?? "lease lost";
    } finally {
      signal.removeEventListener("abort", onStop);
    }
  }

  /**
   * Keepalives every ttl/6 until the session ends, without waiting for the ones in flight; each
   * may take until the step-down deadline of when it was sent. A lease etcd no longer knows, or no
   * keepalive confirmed by that deadline, ends the session.
   */
  private async keepalive(lease: Lease, over: AbortController): Promise<void> {
    const lose = (reason: string) => this.sessionLost?.(reason);
    const inFlight = new Set<Promise<void>>();
    const every = this.ttlMs / KEEPALIVES_PER_TTL;
    while (!over.signal.aborted) {
      const deadline = this.confirmedSentAt + this.ttlMs - STEP_DOWN_MARGIN_MS;
      if (Date.now() >= deadline) {
        lose("no keepalive confirmed within the lease TTL");
        break;
      }
      const sentAt = Date.now();
      const one = lease.keepaliveOnce({ deadline }).then(
        () => {
          if (sentAt > this.confirmedSentAt) this.confirmedSentAt = sentAt;
        },
        (err: unknown) => {
          if (err instanceof EtcdLeaseInvalidError) lose("etcd no longer knows this server's lease");
          else if (!over.signal.aborted)
            this.opts.log.warn("lease keepalive failed", { error: (err as Error).message });
        },
      );
      inFlight.add(one);
      void one.finally(() => inFlight.delete(one));
      const untilDeadline = this.confirmedSentAt + this.ttlMs - STEP_DOWN_MARGIN_MS - Date.now();
      await sleep(Math.max(0, Math.min(every, untilDeadline)), over.signal).catch(() => undefined);
    }
    // Each ends by its deadline at the latest.
    await Promise.allSettled([...inFlight]);
  }

  /** Tries to become the leader, waiting for the key to be free in between, until the session ends. */
  private async campaign(over: AbortSignal): Promise<void> {
    const { client, keys, self } = this.opts;
    while (!over.aborted) {
      const res = await client
        .if(keys.leader, "Create", "==", 0)
        .then(client.put(keys.leader).value(JSON.stringify(self)).lease(this.leaseId))
        .else(client.get(keys.leader))
        .commit();
      if (over.aborted) return;
      if (res.succeeded) {
        this.term = { revision: res.header.revision, sinceMs: Date.now() };
        this.opts.log.info("this server is the leader", { term: this.term.revision });
        this.opts.onGain(this.term);
        await new Promise<void>((resolve) => {
          if (over.aborted) resolve();
          else over.addEventListener("abort", () => resolve(), { once: true });
        });
        return;
      }
      const kv = res.responses[0]?.response_range.kvs[0];
      if (kv) this.setKnown(kv);
      // Until the key is deleted (the watch wakes this), or a TTL as a safety net.
      await this.nap(this.ttlMs + randomInt(0, 250), over);
    }
  }

  /** Watches the leader key for the whole life of the election: who leads, and when it is free. */
  private async observe(): Promise<void> {
    const { client, keys } = this.opts;
    const watcher = client.watch().key(keys.leader).watcher();
    watcher.on("connected", () => {
      this.watching = true;
      void client
        .get(keys.leader)
        .exists()
        .then((there) => {
          if (!there) this.clearKnown("leader key absent");
        })
        .catch(() => undefined);
    });
    watcher.on("disconnected", () => {
      this.watching = false;
    });
    watcher.on("error", (err) => this.opts.log.warn("leader watch failed", { error: err.message }));
    watcher.on("put", (kv) => {
      this.setKnown(kv);
      // Someone else's value under the key while this server leads: the term is over.
      if (this.term && kv.create_revision !== this.term.revision) this.sessionLost?.("leader key replaced");
    });
    watcher.on("delete", () => this.clearKnown("leader key deleted"));
    this.watcher = watcher;
  }

  private setKnown(kv: IKeyValue): void {
    const member = parseMember(kv.value.toString("utf8"));
    if (!member) return;
    if (this.known?.term.revision !== kv.create_revision) {
      this.known = { member, term: { revision: kv.create_revision, sinceMs: Date.now() } };
    }
  }

  private clearKnown(reason: string): void {
    this.known = null;
    if (this.term) this.sessionLost?.(reason);
    for (const w of this.wakers) w();
  }

  private endTerm(reason: string): void {
    this.sessionLost = null;
    if (!this.term) return;
    this.opts.log.warn("this server is no longer the leader", { term: this.term.revision, reason });
    this.term = null;
    // Its own key may outlive the term for a moment; it is no leader to report.
    if (this.known?.member.ID === this.opts.self.ID) this.known = null;
    this.opts.onLose(reason);
  }

  private async revoke(): Promise<void> {
    const lease = this.lease;
    this.lease = null;
    this.leaseId = "";
    // Best effort: an unreachable etcd lets the lease run out on its own.
    await lease?.revoke({ deadline: Date.now() + 1_000 }).catch(() => undefined);
  }

  /** Sleeps `ms`, or less when the leader key is freed or the session ends. */
  private async nap(ms: number, signal: AbortSignal): Promise<void> {
    let wake!: () => void;
    const woke = new Promise<void>((resolve) => (wake = resolve));
    this.wakers.add(wake);
    try {
      await Promise.race([sleep(ms, signal).catch(() => undefined), woke]);
    } finally {
      this.wakers.delete(wake);
    }
  }
}
