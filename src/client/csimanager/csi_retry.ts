/**
 * Retry policy for node-side CSI calls (docs/design.md invariants): transient codes (isRetryable) are
 * retried with capped exponential backoff; everything else — UNIMPLEMENTED, INVALID_ARGUMENT,
 * NOT_FOUND, unknown errors — fails at once. The observer is told which CSI method it retries, and
 * an error a call fails with for good records its method (csiMethodOf), so callers tell steps apart
 * structurally, never by the message text.
 */
import { retryWithBackoff } from "../../internal/backoff.js";
import { isBerthError, isRetryable } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";

export interface CsiRetryPolicy {
  baseMs: number;
  maxMs: number;
  /** Budget for one call including its retries. */
  deadlineMs: number;
  jitter?: number;
}

export const DEFAULT_CSI_RETRY: CsiRetryPolicy = { baseMs: 500, maxMs: 30_000, deadlineMs: 5 * 60_000 };

export function isTransientCsiError(err: unknown): boolean {
  return isBerthError(err) && isRetryable(err.code);
}

/**
 * Told of each transient failure that will be retried (attempt is 0-based); `method` is what the
 * caller named the call (the CSI method, e.g. "NodeUnstageVolume").
 */
export type CsiRetryObserver = (err: unknown, attempt: number, delayMs: number, method: string) => void;

/** The method each error a retried call finally failed with came from (errors are not copied). */
const failedMethods = new WeakMap<object, string>();

/** The `what` of the retryCsiCall that failed with `err`, if it came from one. */
export function csiMethodOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null ? failedMethods.get(err) : undefined;
}

export async function retryCsiCall<T>(
  what: string,
  fn: () => Promise<T>,
  policy: CsiRetryPolicy,
  log: Logger,
  signal?: AbortSignal,
  onRetry?: CsiRetryObserver,
): Promise<T> {
  try {
    return await retryWithBackoff(() => fn(), {
      baseMs: policy.baseMs,
      maxMs: policy.maxMs,
      deadlineMs: policy.deadlineMs,
      jitter: policy.jitter,
      signal,
      shouldRetry: isTransientCsiError,
      onRetry: (err, attempt, delayMs) => {
        log.warn(`${what} failed, retrying`, { error: err, attempt: attempt + 1, delayMs });
        onRetry?.(err, attempt, delayMs, what);
      },
    });
  } catch (err) {
    // The innermost call names it: an error passed up through another retryCsiCall keeps its own.
    if (typeof err === "object" && err !== null && !failedMethods.has(err)) failedMethods.set(err, what);
    throw err;
  }
}
