/**
 * The ControllerPublishVolume of a claim (claim.ts), with the provider's refusals told to the
 * attachment reconciler (ServerDeps.publishRefused; leader/attachment_hints.ts):
 *
 * - FAILED_PRECONDITION ("published to another node", CSI) is answered to the claiming node at
 *   once, not retried under the volume's lock: only a ControllerUnpublish can clear it, and every
 *   ControllerUnpublish berth sends (the release walk, the volumewatcher, the reconciler) takes this
 *   same lock, so retrying while holding it could only wait out its deadline. The node retries the
 *   claim with its own backoff; the reconciler, told now, has the lock in between.
 * - RESOURCE_EXHAUSTED (the node's attach limit at the provider) is told too, and retried as
 *   before: another volume's detach on that node, under that volume's lock, can clear it.
 * - Every other failure keeps the controller client's retry policy.
 */
import { asBerthError, isRetryable, type ErrorCode } from "../../structs/errors.js";
import type { ControllerPublishVolumeRequest } from "../../structs/rpc.js";
import type { ServerDeps } from "../deps.js";

/** Provider refusals that may mean berth's claims and its attachments disagree. */
const DRIFT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_CSI_FAILED_PRECONDITION",
  "ERR_CSI_RESOURCE_EXHAUSTED",
]);

export async function publishForClaim(
  deps: Pick<ServerDeps, "controllers" | "publishRefused">,
  req: ControllerPublishVolumeRequest,
  signal: AbortSignal | undefined,
): Promise<Record<string, string>> {
  const call = (retryDeadlineMs?: number) =>
    deps.controllers.call(req.PluginID, "ClientCSI.ControllerPublishVolume", req, {
      requires: "SupportsAttachDetach",
      signal,
      retryDeadlineMs,
    });
  try {
    // One round over the candidates first: a refusal is known before any retry.
    return (await call(0)).PublishContext ?? {};
  } catch (err) {
    const code = asBerthError(err).code;
    if (DRIFT_CODES.has(code)) deps.publishRefused?.(req.PluginID);
    if (code === "ERR_CSI_FAILED_PRECONDITION" || !isRetryable(code) || signal?.aborted) throw err;
  }
  try {
    return (await call()).PublishContext ?? {};
  } catch (err) {
    if (DRIFT_CODES.has(asBerthError(err).code)) deps.publishRefused?.(req.PluginID);
    throw err;
  }
}
