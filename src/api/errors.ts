/** Errors the API client throws, so callers can tell "the server said no" from "no server". */

/** The server answered with a 4xx/5xx status; `message` is its plain-text body. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    /** The server's stable error code (its X-Berth-Error-Code header), e.g. ERR_CSI_NOT_SUPPORTED. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The request never got an answer: connection refused, unknown host, reset, timeout. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
  constructor(
    readonly address: string,
    cause: unknown,
  ) {
    super(`cannot reach berth at ${address}: ${describeCause(cause)}`, { cause });
  }
}

/** undici's fetch reports "fetch failed" and hides the system error (ECONNREFUSED…) in `cause`. */
function describeCause(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
