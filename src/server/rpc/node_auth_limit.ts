/**
 * Slows down guessing of node secrets: a token bucket of failed node authentications per remote
 * address. Every refused Node.Register (wrong or missing secret) takes a token; while an address
 * has none left, its agent RPC upgrades are answered 429 and a Node.Register on a connection it
 * already holds is refused, before any secret is compared (so a blocked guesser learns nothing).
 * Successful registrations cost nothing, so nodes that know their secret never meet the limit
 * unless they share an address with a guesser.
 *
 * Defaults: 10 failures at once, then one more every 10 s (360 an hour) — far below what could
 * guess a 122-bit secret, far above what a node that lost its secret and redials (its agent backs
 * off to a minute after a refusal) uses. `limits { rpc_auth_failure_burst = N,
 * rpc_auth_failure_interval = "10s" }` changes them; a burst of 0 turns the limit off.
 */

export interface NodeAuthLimits {
  /** Failed authentications an address may make before it is refused; 0 disables the limit. */
  rpcAuthFailureBurst: number;
  /** Milliseconds after which an address regains one failed attempt. */
  rpcAuthFailureIntervalMs: number;
}

export const DEFAULT_NODE_AUTH_LIMITS: Readonly<NodeAuthLimits> = {
  rpcAuthFailureBurst: 10,
  rpcAuthFailureIntervalMs: 10_000,
};

/** Addresses tracked at most; past it full buckets are dropped first, then the oldest. */
const MAX_TRACKED = 10_000;

interface Bucket {
  tokens: number;
  atMs: number;
}

export class NodeAuthLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: NodeAuthLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until `addr` may try again; 0 when it may try now. */
  retryAfterMs(addr: string): number {
    if (this.limits.rpcAuthFailureBurst <= 0) return 0;
    const b = this.refilled(addr);
    if (!b || b.tokens >= 1) return 0;
    return Math.ceil((1 - b.tokens) * this.limits.rpcAuthFailureIntervalMs);
  }

  /** Records one failed authentication from `addr`. */
  failed(addr: string): void {
    if (this.limits.rpcAuthFailureBurst <= 0) return;
    const b = this.refilled(addr) ?? { tokens: this.limits.rpcAuthFailureBurst, atMs: this.now() };
    b.tokens = Math.max(0, b.tokens - 1);
    // Re-inserted so the map's order is the order of last failure (the prune drops the oldest).
    this.buckets.delete(addr);
    this.buckets.set(addr, b);
    if (this.buckets.size > MAX_TRACKED) this.prune();
  }

  /** The address's bucket brought up to now; a full one is forgotten. */
  private refilled(addr: string): Bucket | undefined {
    const b = this.buckets.get(addr);
    if (!b) return undefined;
    const now = this.now();
    const interval = Math.max(1, this.limits.rpcAuthFailureIntervalMs);
    b.tokens = Math.min(this.limits.rpcAuthFailureBurst, b.tokens + (now - b.atMs) / interval);
    b.atMs = now;
    if (b.tokens >= this.limits.rpcAuthFailureBurst) {
      this.buckets.delete(addr);
      return undefined;
    }
    return b;
  }

  private prune(): void {
    for (const addr of [...this.buckets.keys()]) this.refilled(addr);
    for (const addr of this.buckets.keys()) {
      if (this.buckets.size <= MAX_TRACKED) break;
      this.buckets.delete(addr);
    }
  }
}
