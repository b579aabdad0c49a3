/**
 * The retry policy of the CSI list calls (ListVolumes, ListSnapshots), which differs from every
 * other controller call. The CSI spec gives ABORTED a list-specific meaning: "starting_token is not
 * valid". Elsewhere ABORTED means "another operation on this volume is pending" and is worth a
 * retry; for a list it is the caller's token that is wrong, so retrying only keeps the request busy
 * for the whole retry deadline (issue 10: 25–28 s per bad `next_token`) and can never succeed.
 * INVALID_ARGUMENT is final for every method already. Both are answered at once, and a bad token
 * becomes a validation error naming the API's `next_token` parameter (HTTP 400), the field the
 * caller can fix.
 */
import { BerthError, validationError, type ErrorCode } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";

type Method = keyof ClientMethods;

const PAGED_LISTS: ReadonlySet<Method> = new Set<Method>([
  "ClientCSI.ControllerListVolumes",
  "ClientCSI.ControllerListSnapshots",
]);

/** Codes a paged list answers for the caller's own paging input: never retried, on any candidate. */
const FINAL_FOR_LISTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_CSI_ABORTED",
  "ERR_CSI_INVALID_ARGUMENT",
]);

/** Whether `err` from `method` must be answered at once although its code is retryable elsewhere. */
export function isFinalForMethod(method: Method, err: BerthError): boolean {
  return PAGED_LISTS.has(method) && FINAL_FOR_LISTS.has(err.code);
}

/**
 * The error the caller sees for a final list failure: an ABORTED answer to a request that carried a
 * starting token is a refused `next_token`; anything else keeps the plugin's own code.
 */
export function listFailure(method: Method, params: unknown, err: BerthError): BerthError {
  const token = (params as { StartingToken?: unknown } | null)?.StartingToken;
  if (
    PAGED_LISTS.has(method) &&
    err.code === "ERR_CSI_ABORTED" &&
    typeof token === "string" &&
    token !== ""
  ) {
    return validationError(
      "next_token",
      `the plugin refused the paging token ${JSON.stringify(token)} (${err.message}); start again without next_token`,
    );
  }
  return err;
}
