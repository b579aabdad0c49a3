/**
 * Coded errors. The code is the contract: it crosses the agent↔server RPC and the HTTP API as data,
 * so retry logic and status mapping never match on message text.
 */

/**
 * Every code, in catalogue order (docs/errors.md). `ErrorCode` is derived from this list, so the type
 * and the runtime list cannot differ; the HTTP status of each is in server/wire/status_map.ts.
 */
export const ERROR_CODES = [
  // The request itself is refused (bad input, missing object, conflict, no permission): never retried.
  "ERR_VALIDATION",
  "ERR_NOT_FOUND",
  "ERR_CONFLICT",
  "ERR_PERMISSION_DENIED",
  "ERR_METHOD_NOT_ALLOWED",
  // An ACL endpoint was called on an agent whose ACL system is off (Nomad's "ACL support disabled").
  "ERR_ACL_DISABLED",
  // The client holds too many connections open to the server (its per-address limit), or its
  // address failed node authentication too often.
  "ERR_TOO_MANY_CONNECTIONS",
  // The request's body passes the server's size limit.
  "ERR_REQUEST_TOO_LARGE",
  // The answer's format is not enabled on this agent (Prometheus metrics off).
  "ERR_UNSUPPORTED_MEDIA_TYPE",
  // Claim outcomes the client retries with backoff (another alloc may still be releasing).
  "ERR_CSI_MAX_CLAIMS",
  "ERR_CSI_IN_USE",
  "ERR_CSI_VOLUME_UNSCHEDULABLE",
  // No healthy plugin instance (or no connected node running it) could take the call.
  "ERR_CSI_PLUGIN_UNAVAILABLE",
  // A plugin answered with a gRPC status; one code per status the CSI spec gives meaning to.
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
  // A capability the plugin does not advertise; berth refuses before calling.
  "ERR_CSI_NOT_SUPPORTED",
  // No topology segment's last measured capacity holds the volume (capacity_fit.ts); refused
  // before any plugin call.
  "ERR_CSI_NO_CAPACITY",
  // A plugin answered NodeStage/NodePublish with success but nothing is mounted at the host path.
  "ERR_CSI_NOT_MOUNTED",
  // A node answered a controller call with something malformed (an empty external ID, a bad
  // capacity...): nothing of it was used or stored (structs/controller_answer_validate.ts).
  "ERR_CSI_BAD_ANSWER",
  // Transport and lifecycle.
  "ERR_RPC_UNAVAILABLE",
  "ERR_RPC_TIMEOUT",
  "ERR_NODE_NOT_CONNECTED",
  // The server's state store (etcd) cannot be reached; nothing of the write was committed.
  "ERR_STATE_UNAVAILABLE",
  // Several servers: no leader answered within the hold time (Nomad's "No cluster leader"), or a
  // call for the leader reached a server that no longer leads (the sender asks again).
  "ERR_NO_LEADER",
  // A call begun under a leader term or a cluster volume lock that has ended (or whose etcd session
  // is no longer confirmed fresh) is refused before it is sent (internal/fence.ts).
  "ERR_FENCED",
  "ERR_ABORTED",
  "ERR_DRIVER",
  "ERR_INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class BerthError extends Error {
  readonly code: ErrorCode;
  /** The input field an ERR_VALIDATION is about, e.g. `Volumes[0].ID`. */
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BerthError";
    this.code = code;
    this.field = options?.field;
  }

  /** The wire form. Only code, message and field cross a process boundary, never a stack. */
  toJSON(): WireError {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }
}

export interface WireError {
  code: ErrorCode;
  message: string;
  field?: string;
}

export function validationError(field: string, problem: string): BerthError {
  return new BerthError("ERR_VALIDATION", `${field}: ${problem}`, { field });
}

export function notFound(what: string, id: string): BerthError {
  return new BerthError("ERR_NOT_FOUND", `${what} ${JSON.stringify(id)} not found`);
}

export function isBerthError(err: unknown): err is BerthError {
  return err instanceof BerthError;
}

/** Anything thrown, as a BerthError; unknown errors become ERR_INTERNAL with their message. */
export function asBerthError(err: unknown): BerthError {
  if (err instanceof BerthError) return err;
  if (err instanceof Error && err.name === "AbortError") {
    return new BerthError("ERR_ABORTED", "operation cancelled", { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new BerthError("ERR_INTERNAL", message, { cause: err });
}

export function fromWire(w: WireError): BerthError {
  return new BerthError(w.code, w.message, w.field === undefined ? undefined : { field: w.field });
}

/**
 * CSI/transport codes that a caller retries with capped exponential backoff (docs/design.md).
 * UNIMPLEMENTED and INVALID_ARGUMENT are deliberately absent: retrying them cannot succeed.
 */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_CSI_ABORTED",
  "ERR_CSI_UNAVAILABLE",
  "ERR_CSI_DEADLINE_EXCEEDED",
  "ERR_CSI_RESOURCE_EXHAUSTED",
  "ERR_CSI_FAILED_PRECONDITION",
  "ERR_RPC_UNAVAILABLE",
  "ERR_RPC_TIMEOUT",
  "ERR_NODE_NOT_CONNECTED",
  "ERR_STATE_UNAVAILABLE",
  "ERR_NO_LEADER",
  "ERR_FENCED",
  "ERR_CSI_PLUGIN_UNAVAILABLE",
  "ERR_CSI_NOT_MOUNTED",
]);

export function isRetryable(code: ErrorCode): boolean {
  return RETRYABLE.has(code);
}

/** Claim refusals that mean "someone else holds it for now": the client waits and retries. */
const CLAIM_RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_CSI_MAX_CLAIMS",
  "ERR_CSI_IN_USE",
  "ERR_CSI_VOLUME_UNSCHEDULABLE",
]);

export function isClaimRetryable(code: ErrorCode): boolean {
  return CLAIM_RETRYABLE.has(code) || RETRYABLE.has(code);
}
