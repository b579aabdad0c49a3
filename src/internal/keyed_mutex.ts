/**
 * An async mutex per key: work for one key runs one at a time in arrival order, different keys run
 * in parallel. Idle keys are dropped, so the map only holds keys with work queued or running.
 * Used to keep at most one CSI call in flight per volume (client and server), and to serialise
 * work on one plugin directory.
 */
import { abortError } from "./abort.js";

export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every earlier holder of `key` has finished. Rejects early if `signal` aborts while queued. */
  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    try {
      await waitOrAbort(prev, signal);
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Whether `key` has work running or queued: a background reader skips it rather than wait. */
  isBusy(key: string): boolean {
    return this.tails.has(key);
  }

  /** Number of keys with work queued or running (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }

  /** Keys with a holder or waiters; for tests and diagnostics. */
  get busyKeys(): string[] {
    return [...this.tails.keys()];
  }
}

function waitOrAbort(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
