/**
 * Event-loop stalls, as the heartbeat monitor needs to know them: a light interval probe (unref'd)
 * measures how late it runs with perf_hooks' monotonic clock, and any timer can report its own
 * lateness; a delay longer than `stallMs` is a stall. While the loop is stalled the server reads no
 * heartbeat — they wait in the sockets, and a client whose call timed out meanwhile sends its next
 * one only later — so a TTL that expires across a stall says nothing about the node (heartbeat.ts).
 */
import { performance } from "node:perf_hooks";

export class LoopStalls {
  /** performance.now() when the last stall was seen to end; -Infinity before any. */
  private lastEnd = Number.NEGATIVE_INFINITY;
  private lastMs = 0;
  private probe: NodeJS.Timeout | undefined;
  private probeLast = 0;

  constructor(
    /** A delay longer than this is a stall. */
    readonly stallMs: number,
    private readonly probeMs = Math.max(10, Math.min(1000, stallMs / 2)),
  ) {}

  start(): void {
    if (this.probe) return;
    this.probeLast = performance.now();
    this.probe = setInterval(() => {
      const now = performance.now();
      this.report(now, now - this.probeLast - this.probeMs);
      this.probeLast = now;
    }, this.probeMs);
    this.probe.unref();
  }

  stop(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }

  /** A timer due at `dueAt` ran at `now` (both performance.now()): lateness is a stall seen. */
  reportLate(dueAt: number, now = performance.now()): void {
    this.report(now, now - dueAt);
  }

  /** When the last stall ended (performance.now()), -Infinity when none was seen. */
  get lastStallEnd(): number {
    return this.lastEnd;
  }

  /** How long the last stall lasted, in ms. */
  get lastStallMs(): number {
    return this.lastMs;
  }

  private report(now: number, delayMs: number): void {
    if (delayMs <= this.stallMs) return;
    // The same stall seen by the probe and by a late timer is one stall: keep its first report.
    if (now - this.lastEnd < this.stallMs) return;
    this.lastEnd = now;
    this.lastMs = delayMs;
  }
}
