/** AbortSignal helpers: every long operation in berth takes a signal and honours it promptly. */

export function abortError(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const err = new Error(typeof reason === "string" ? reason : "operation aborted");
  err.name = "AbortError";
  return err;
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError(signal);
}

/** Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A signal that aborts when any input aborts or after `timeoutMs` (when given), with a
 * `TimeoutError` reason as AbortSignal.timeout's.
 *
 * The timeout is a controller aborted by a timer, never `AbortSignal.timeout` inside
 * `AbortSignal.any`: Node (20.x) holds an `any` signal's sources weakly, and a timeout signal that
 * nothing else references is collected before it fires — under GC pressure the wait then never
 * ends (1,500 simulated nodes: some registration waits hung for good; 2,000 such waits with a forced
 * GC: none fired). The timer holds its controller until it fires or the result aborts.
 */
export function anySignal(signals: (AbortSignal | undefined)[], timeoutMs?: number): AbortSignal {
  const list = signals.filter((s): s is AbortSignal => s !== undefined);
  if (timeoutMs === undefined) return AbortSignal.any(list);
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    timeoutMs,
  );
  // As AbortSignal.timeout's: a pending timeout does not keep the process alive.
  timer.unref();
  const out = AbortSignal.any([...list, timeout.signal]);
  if (out.aborted) clearTimeout(timer);
  else out.addEventListener("abort", () => clearTimeout(timer), { once: true });
  return out;
}

export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError");
}
