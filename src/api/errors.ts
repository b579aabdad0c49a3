/** Errors the API client throws, so callers can tell "the server said no" from "no server". */

/**
 * The server's stable error codes, as the API sends them in its X-Berth-Error-Code header. The API
 * keeps its own copy (it imports nothing of the server's); a unit test checks it equals the
 * server's list in structs/errors.ts, so the two cannot drift.
 */
export const API_ERROR_CODES = [
  "ERR_VALIDATION",
  "ERR_NOT_FOUND",
  "ERR_CONFLICT",
  "ERR_PERMISSION_DENIED",
  "ERR_METHOD_NOT_ALLOWED",
  "ERR_ACL_DISABLED",
  "ERR_TOO_MANY_CONNECTIONS",
  "ERR_REQUEST_TOO_LARGE",
  "ERR_UNSUPPORTED_MEDIA_TYPE",
  "ERR_CSI_MAX_CLAIMS",
  "ERR_CSI_IN_USE",
  "ERR_CSI_VOLUME_UNSCHEDULABLE",
  "ERR_CSI_PLUGIN_UNAVAILABLE",
  "ERR_CSI_INVALID_ARGUMENT",
  "ERR_CSI_NOT_FOUND",
  "ERR_CSI_ALREADY_EXISTS",
  "ERR_CSI_UNIMPLEMENTED",
  "ERR_CSI_FAILED_PRECONDITION",
  "ERR_CSI_ABORTED",
  "ERR_CSI_UNAVAILABLE",
  "ERR_CSI_DEADLINE_EXCEEDED",
  "ERR_CSI_RESOURCE_EXHAUSTED",
  "ERR_CSI_OUT_OF_RANGE",
  "ERR_CSI_INTERNAL",
  "ERR_CSI_UNKNOWN",
  "ERR_CSI_NOT_SUPPORTED",
  "ERR_CSI_NO_CAPACITY",
  "ERR_CSI_NOT_MOUNTED",
  "ERR_CSI_BAD_ANSWER",
  "ERR_RPC_UNAVAILABLE",
  "ERR_RPC_TIMEOUT",
  "ERR_NODE_NOT_CONNECTED",
  "ERR_STATE_UNAVAILABLE",
  "ERR_NO_LEADER",
  "ERR_FENCED",
  "ERR_ABORTED",
  "ERR_DRIVER",
  "ERR_INTERNAL",
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** The response header that carries the code of an error answer. */
export const ERROR_CODE_HEADER = "X-Berth-Error-Code";

/**
 * The server answered with a 4xx/5xx status; `message` is its plain-text body. Callers branch on
 * `code` (see `hasErrorCode`), never on `status` or the text: the status is for showing only.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    /**
     * The server's stable error code (its X-Berth-Error-Code header), e.g. ERR_CSI_NOT_SUPPORTED;
     * undefined when the answer carried none. A string, not `ApiErrorCode`: a newer server may send
     * a code this client does not know, which then matches no branch.
     */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** True when `err` is the server's answer with one of `codes`: the only way the CLI tells errors apart. */
export function hasErrorCode(err: unknown, ...codes: ApiErrorCode[]): err is ApiError {
  return err instanceof ApiError && err.code !== undefined && (codes as string[]).includes(err.code);
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
