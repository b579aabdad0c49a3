/**
 * The order of a node agent's reports about itself (Node.Register and Node.UpdateFingerprint carry
 * the node's whole fingerprint, replacing the stored one). Reports can reach the store out of order:
 * a request the agent sent to a server that then hung or was paused waits in that server's socket
 * buffer; the agent gives up on it, moves to another server and reports again there; when the first
 * server resumes it serves the buffered request and would overwrite the newer report with the older
 * one. The agent only reports changes, so such a stale fingerprint (a plugin missing or unhealthy)
 * stayed for good: a long Jepsen run of issue 28 saw a node's plugin instance vanish from the plugin
 * record after its old server came back from a 45 s SIGSTOP, while the plugin ran healthy.
 *
 * So every report carries `[epoch, seq]`: the epoch grows with each start of the agent (kept in its
 * data dir), seq with each report of that agent process. The server stores the order of the last
 * report it applied on the node record (Node.ReportOrder) and refuses, in the same transaction, any
 * report whose order is not greater. A report without an order (an agent from before this) is
 * applied as before. Pure: no I/O.
 */
import { BerthError, isBerthError, validationError } from "./errors.js";

/** `[epoch, seq]`, compared lexicographically. */
export type ReportOrder = [epoch: number, seq: number];

/** A report request's order (Node.Register, Node.UpdateFingerprint); absent: applied unordered. */
export interface OrderedReport {
  ReportOrder?: ReportOrder;
}

/** A request's ReportOrder: absent (undefined) or two whole numbers ≥ 0; anything else is refused. */
export function validateReportOrder(field: string, v: unknown): ReportOrder | undefined {
  if (v === undefined || v === null) return undefined;
  const whole = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (!Array.isArray(v) || v.length !== 2 || !whole(v[0]) || !whole(v[1])) {
    throw validationError(field, "must be [epoch, seq], two whole numbers ≥ 0");
  }
  return [v[0] as number, v[1] as number];
}

/**
 * Whether a report of order `incoming` is older than (or the same as) the last one applied,
 * `applied`: then it must not be applied. Either absent: not stale (nothing to compare).
 */
export function isStaleReport(applied: ReportOrder | undefined, incoming: ReportOrder | undefined): boolean {
  if (!applied || !incoming) return false;
  return incoming[0] < applied[0] || (incoming[0] === applied[0] && incoming[1] <= applied[1]);
}

/**
 * Throws ERR_CONFLICT (field `ReportOrder`: isStaleReportError tells it) when a report of node
 * `nodeId` with order `incoming` must not be applied (isStaleReport); called inside the
 * transaction that would apply it, so nothing is written.
 */
export function refuseStaleReport(
  nodeId: string,
  applied: ReportOrder | undefined,
  incoming: ReportOrder | undefined,
): void {
  if (!isStaleReport(applied, incoming)) return;
  throw new BerthError(
    "ERR_CONFLICT",
    `stale report of node ${nodeId}: order [${String(incoming)}] is not after the applied [${String(applied)}]`,
    { field: "ReportOrder" },
  );
}

/** Whether `err` is refuseStaleReport's refusal. */
export function isStaleReportError(err: unknown): err is BerthError {
  return isBerthError(err) && err.code === "ERR_CONFLICT" && err.field === "ReportOrder";
}
