/**
 * The one capped-exponential-backoff helper. Retries `fn` while `shouldRetry(err)` holds, sleeping
 * base·2^n (capped, with ±20% jitter) between attempts, until `deadlineMs` passes or `signal` aborts;
 * then the last error is thrown.
 */
import { sleep, throwIfAborted } from "./abort.js";

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** Total time budget from the first attempt; Infinity retries until aborted. */
  deadlineMs: number;
  signal?: AbortSignal;
  shouldRetry: (err: unknown) => boolean;
  /** Called before each sleep, e.g. to emit a task event. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  /** Jitter fraction in [0,1); 0.2 by default. Tests pass 0 for determinism. */
  jitter?: number;
  /**
   * Ends a sleep early: called once per sleep with a signal that aborts when that sleep is over
   * (to unsubscribe); the next attempt starts as soon as the returned promise resolves (e.g. "the
   * plugin this waits on became healthy").
   */
  wake?: (sleepOver: AbortSignal) => Promise<void>;
}

export function backoffDelay(attempt: number, baseMs: number, maxMs: number, jitter = 0.2): number {
  const raw = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  const spread = raw * jitter;
  return Math.max(0, Math.round(raw - spread + Math.random() * 2 * spread));
}

export async function retryWithBackoff<T>(
  fn: (attempt: number) => Promise<T>,
  opts: BackoffOptions,
): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(opts.signal);
    try {
      return await fn(attempt);
    } catch (err) {
      if (!opts.shouldRetry(err)) throw err;
      const delay = backoffDelay(attempt, opts.baseMs, opts.maxMs, opts.jitter);
      if (Date.now() + delay - started > opts.deadlineMs) throw err;
      opts.onRetry?.(err, attempt, delay);
      await sleepOrWake(delay, opts.signal, opts.wake);
    }
  }
}

async function sleepOrWake(
  ms: number,
  signal: AbortSignal | undefined,
  wake: BackoffOptions["wake"],
): Promise<void> {
  if (!wake) return sleep(ms, signal);
  const over = new AbortController();
  try {
    // The sleep ends with `over` too, so a woken retry leaves no timer behind.
    const both = signal ? AbortSignal.any([signal, over.signal]) : over.signal;
    await Promise.race([sleep(ms, both), wake(over.signal)]);
  } finally {
    over.abort();
  }
}
