/**
 * One timer per pending follow-up eval, firing at its WaitUntil. Event-driven: nothing polls the
 * allocs; a timer exists only for an eval that is stored pending, and a fired timer runs that one
 * eval. Timers are unref'd (they never keep a process alive) and cleared on stop.
 */
import { waitUntilMs, type Evaluation } from "../../structs/eval.js";

type EvalRef = Pick<Evaluation, "ID" | "Namespace" | "JobID">;

/** setTimeout's largest delay; a later WaitUntil is reached in several steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class FollowupTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly run: (ev: EvalRef) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.timers.size;
  }

  /**
   * Arms a timer for every pending eval with a WaitUntil (server start). An eval that cannot be
   * armed goes to `onError` and the others are still armed.
   */
  armAll(evals: Evaluation[], onError: (ev: Evaluation, err: unknown) => void = () => undefined): void {
    for (const e of evals) {
      try {
        const at = waitUntilMs(e);
        if (e.Status === "pending" && at !== null) this.arm(e, at);
      } catch (err) {
        onError(e, err);
      }
    }
  }

  /** Runs `ev` at unix ms `atMs` (at once when that has passed); re-arming an armed eval is a no-op. */
  arm(ev: EvalRef, atMs: number): void {
    if (this.stopped || this.timers.has(ev.ID)) return;
    const delay = Math.max(0, Math.min(atMs - this.now(), MAX_TIMER_MS));
    const t = setTimeout(() => {
      this.timers.delete(ev.ID);
      if (this.stopped) return;
      if (atMs > this.now()) return this.arm(ev, atMs);
      void this.run(ev);
    }, delay);
    t.unref();
    this.timers.set(ev.ID, t);
  }

  /** Clears every timer; later arm() calls still arm (a new term as leader re-arms from the store). */
  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }
}
