/**
 * gRPC status → BerthError. The code is the contract (ERR_CSI_<STATUS>); retry decisions use
 * `isRetryable` from structs/errors.ts and never the message. Messages name the CSI method and carry
 * the plugin's own message, with every secret value the request carried cut out of it first.
 */
import { status, type ServiceError } from "@grpc/grpc-js";
import { BerthError, isBerthError, type ErrorCode } from "../structs/errors.js";
import { isAbortError } from "../internal/abort.js";

/**
 * One code per gRPC status. Statuses the CSI spec gives no CSI-specific meaning, and for which
 * structs/errors.ts has no ERR_CSI_* code, map to the nearest existing code:
 * CANCELLED → ERR_ABORTED (berth cancelled the call), PERMISSION_DENIED/UNAUTHENTICATED →
 * ERR_PERMISSION_DENIED (fix the secrets, do not retry), DATA_LOSS → ERR_CSI_INTERNAL.
 */
export const STATUS_TO_CODE: Readonly<Record<number, ErrorCode>> = {
  [status.CANCELLED]: "ERR_ABORTED",
  [status.UNKNOWN]: "ERR_CSI_UNKNOWN",
  [status.INVALID_ARGUMENT]: "ERR_CSI_INVALID_ARGUMENT",
  [status.DEADLINE_EXCEEDED]: "ERR_CSI_DEADLINE_EXCEEDED",
  [status.NOT_FOUND]: "ERR_CSI_NOT_FOUND",
  [status.ALREADY_EXISTS]: "ERR_CSI_ALREADY_EXISTS",
  [status.PERMISSION_DENIED]: "ERR_PERMISSION_DENIED",
  [status.RESOURCE_EXHAUSTED]: "ERR_CSI_RESOURCE_EXHAUSTED",
  [status.FAILED_PRECONDITION]: "ERR_CSI_FAILED_PRECONDITION",
  [status.ABORTED]: "ERR_CSI_ABORTED",
  [status.OUT_OF_RANGE]: "ERR_CSI_OUT_OF_RANGE",
  [status.UNIMPLEMENTED]: "ERR_CSI_UNIMPLEMENTED",
  [status.INTERNAL]: "ERR_CSI_INTERNAL",
  [status.UNAVAILABLE]: "ERR_CSI_UNAVAILABLE",
  [status.DATA_LOSS]: "ERR_CSI_INTERNAL",
  [status.UNAUTHENTICATED]: "ERR_PERMISSION_DENIED",
};

export function codeForStatus(code: number): ErrorCode {
  return STATUS_TO_CODE[code] ?? "ERR_CSI_UNKNOWN";
}

function isServiceError(err: unknown): err is ServiceError {
  // `metadata` tells a gRPC status from a DOMException (whose numeric `code` means something else).
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === "number" && "metadata" in err;
}

/** Replaces every occurrence of each secret value (length ≥ 3, to avoid shredding text) by [REDACTED]. */
export function redactSecretValues(text: string, secretValues: readonly string[]): string {
  let out = text;
  for (const v of secretValues) {
    if (v.length >= 3) out = out.split(v).join("[REDACTED]");
  }
  return out;
}

/**
 * Converts whatever a CSI call threw into a BerthError naming `method`. `secretValues` are the
 * request's secret values and mount flags: a plugin that echoes them in its message is redacted.
 * The original gRPC error is deliberately not attached as `cause`: its message is unredacted.
 */
export function csiError(method: string, err: unknown, secretValues: readonly string[] = []): BerthError {
  if (isBerthError(err)) return err;
  if (isAbortError(err)) return new BerthError("ERR_ABORTED", `CSI ${method} cancelled`);
  if (isServiceError(err)) {
    const code = codeForStatus(err.code);
    const name = status[err.code] ?? String(err.code);
    const detail = redactSecretValues(err.details || "", secretValues);
    return new BerthError(code, `CSI ${method} failed: ${name}: ${detail || "(no message)"}`);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new BerthError(
    "ERR_CSI_INTERNAL",
    `CSI ${method} failed: ${redactSecretValues(message, secretValues)}`,
  );
}

/**
 * True when the failed call may nevertheless have taken effect on the plugin side: it timed out or
 * was cancelled after being sent. A ControllerPublishVolume that ends this way means "maybe attached":
 * the caller must keep the claim and, to give up, call ControllerUnpublishVolume, never assume
 * nothing happened (CSI spec, "Timeouts").
 */
export function isMaybeApplied(err: unknown): boolean {
  if (isAbortError(err)) return true;
  if (!isBerthError(err)) return false;
  return (
    err.code === "ERR_CSI_DEADLINE_EXCEEDED" || err.code === "ERR_RPC_TIMEOUT" || err.code === "ERR_ABORTED"
  );
}

/**
 * Treats a plugin's NOT_FOUND as success: for deletes and unpublish/unstage calls it means the work
 * is already done, which keeps those calls idempotent.
 */
export async function ignoreCsiNotFound(call: Promise<void>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (err instanceof BerthError && err.code === "ERR_CSI_NOT_FOUND") return;
    throw err;
  }
}
