/**
 * The node's self-fence: while the node cannot renew its lease with any server, it stops, by
 * itself, the allocs fence_decide.ts names once their bound has passed (single-writer claims after
 * one heartbeat TTL; a group's disconnect.stop_on_client_after after its own bound). The servers
 * hand a single-writer volume to another alloc only after a strictly longer bound (the
 * volumewatcher's fence hold), so the two writers never overlap, whatever cut the node off: a hung
 * server, a partition, a leader change. The argument, its timing assumptions and its limits are
 * in docs/design.md ("Never two writers").
 *
 * The check runs on a short timer (a tenth of the TTL, at most a second), reading the lease age on
 * the monotonic clock; each alloc is stopped once (AllocSync.stopLocally), logged at warn.
 */
import { performance } from "node:perf_hooks";
import type { Logger } from "../../internal/log.js";
import type { Allocation } from "../../structs/alloc.js";
import { fencePolicy, fenceReason } from "./fence_decide.js";
import type { NodeLease } from "./node_lease.js";

/** What the fence needs of the alloc sync (a fake in unit tests). */
export interface FencedAllocs {
  allocs(): Iterable<Allocation>;
  stopLocally(allocId: string, reason: string): void;
}

const MAX_CHECK_MS = 1_000;
const MIN_CHECK_MS = 50;

export class SelfFence {
  private timer: NodeJS.Timeout | undefined;
  private readonly fenced = new Set<string>();

  constructor(
    private readonly lease: NodeLease,
    private readonly allocs: FencedAllocs,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (!this.timer) this.tick();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One look at every alloc; stops those whose bound has passed. Returns how many it stopped. */
  check(now = performance.now()): number {
    const age = this.lease.ageMs(now);
    const ttl = this.lease.ttlMs;
    let stopped = 0;
    for (const alloc of this.allocs.allocs()) {
      if (this.fenced.has(alloc.ID)) continue;
      const policy = fencePolicy(alloc, ttl);
      if (!policy || age <= policy.afterMs) continue;
      const reason = fenceReason(policy, age);
      this.fenced.add(alloc.ID);
      this.log.warn("stopping an alloc: the node cannot renew its lease with the servers", {
        alloc: alloc.ID,
        rule: policy.rule,
        lease_age_ms: Math.round(age),
        bound_ms: policy.afterMs,
      });
      this.allocs.stopLocally(alloc.ID, reason);
      stopped++;
    }
    return stopped;
  }

  private tick(): void {
    this.check();
    const every = Math.max(MIN_CHECK_MS, Math.min(MAX_CHECK_MS, this.lease.ttlMs / 10));
    this.timer = setTimeout(() => this.tick(), every);
    this.timer.unref();
  }
}
