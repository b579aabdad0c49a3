/**
 * Background work that nobody awaits at the place it starts (an alloc runner, a follow-up pass, a
 * retry of blocked jobs) is started through `BackgroundTasks.run`, never with a bare `void p`:
 * - the promise is kept in a set until it settles, so a shutdown can `drain()` it before it closes
 *   what the work uses (a state store, a connection);
 * - its failure is logged at error with the task's name and handed to `onError`, which surfaces it
 *   where a user sees it (an alloc marked failed, a task event); a failing `onError` is logged too;
 * - the promise `run` returns never rejects, so nothing here can become an unhandled rejection.
 * The process-level 'unhandledRejection' guard (agent/main.ts) is a last resort, not this.
 */
import type { Logger } from "./log.js";

export class BackgroundTasks {
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly log: Logger) {}

  /** How many tasks are still running. */
  get size(): number {
    return this.running.size;
  }

  /** True once `close()` was called: no new task starts. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Runs `fn` in the background under `name`. After `close()` it is not started (and false is
   * returned); otherwise true. A synchronous throw counts as a failure like a rejection.
   */
  run(name: string, fn: () => Promise<unknown>, onError?: (err: unknown) => void): boolean {
    if (this.closed) {
      this.log.debug("not starting background task: shutting down", { task: name });
      return false;
    }
    const p = (async () => {
      try {
        await fn();
      } catch (err) {
        this.log.error("background task failed", { task: name, error: err });
        try {
          onError?.(err);
        } catch (surfaceErr) {
          this.log.error("reporting a background task's failure failed", { task: name, error: surfaceErr });
        }
      }
    })().finally(() => this.running.delete(p));
    this.running.add(p);
    return true;
  }

  /** Resolves once every task has settled, including tasks started while it waits. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Refuses new tasks from now on and waits for the running ones (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }
}
