/**
 * Retry policy for node-side CSI calls (DESIGN.md invariants): transient codes (isRetryable) are
 * retried with capped exponential backoff; everything else — UNIMPLEMENTED, INVALID_ARGUMENT,
 * NOT_FOUND, unknown errors — fails at once.
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

/** Told of each transient failure that will be retried (attempt is 0-based). */
export type CsiRetryObserver = (err: unknown, attempt: number, delayMs: number) => void;

export function retryCsiCall<T>(
  what: string,
  fn: () => Promise<T>,
  policy: CsiRetryPolicy,
  log: Logger,
  signal?: AbortSignal,
  onRetry?: CsiRetryObserver,
): Promise<T> {
  return retryWithBackoff(() => fn(), {
    baseMs: policy.baseMs,
    maxMs: policy.maxMs,
    deadlineMs: policy.deadlineMs,
    ...(policy.jitter === undefined ? {} : { jitter: policy.jitter }),
    ...(signal ? { signal } : {}),
    shouldRetry: isTransientCsiError,
    onRetry: (err, attempt, delayMs) => {
      log.warn(`${what} failed, retrying`, { error: err, attempt: attempt + 1, delayMs });
      onRetry?.(err, attempt, delayMs);
    },
  });
}
