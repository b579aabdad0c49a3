/**
 * Node loss, applied inside one write transaction: the node is marked down and every alloc on it
 * that has not finished becomes ClientStatus `lost` with DesiredStatus `stop` (Nomad's rule), so
 * the scheduler places replacements elsewhere and the volumewatcher releases their claims without
 * the node step. `lost` is final: a node that comes back sees DesiredStatus stop in GetAllocs and
 * stops what it still runs, and its reports never turn a lost alloc live again (see NodeEndpoint).
 */
import { isAllocTerminal } from "../structs/alloc.js";
import { NS_PER_MS } from "../structs/job.js";
import type { StateWriter } from "./state/store.js";

export const LOST_DESCRIPTION = "alloc is lost since its node is down";

/** Returns the jobs whose allocs were lost (to re-evaluate), or null when the node was not up. */
export function markNodeDown(
  tx: StateWriter,
  nodeId: string,
  nowMs: number,
  reason: string,
): { namespace: string; id: string }[] | null {
  const node = tx.getNode(nodeId);
  if (!node || node.Status === "down") return null;
  tx.putNode({ ...node, Status: "down", StatusDescription: reason, StatusUpdatedAt: nowMs });
  const jobs = new Map<string, { namespace: string; id: string }>();
  for (const a of tx.allocsByNode(nodeId)) {
    if (isAllocTerminal(a)) continue;
    tx.putAlloc({
      ...a,
      ClientStatus: "lost",
      ClientDescription: LOST_DESCRIPTION,
      DesiredStatus: "stop",
      DesiredDescription: LOST_DESCRIPTION,
      ModifyTime: nowMs * NS_PER_MS,
    });
    jobs.set(`${a.Namespace}/${a.JobID}`, { namespace: a.Namespace, id: a.JobID });
  }
  return [...jobs.values()];
}

/**
 * Takes a node's plugin instances off the plugin records once it has been down for `boundMs`
 * (sets CSIPluginsDetachedAt; the derivation then drops its entries). Returns false when there is
 * nothing to do: the node is gone, up again, already detached, or not down long enough.
 */
export function detachDownNodePlugins(
  tx: StateWriter,
  nodeId: string,
  nowMs: number,
  boundMs: number,
): boolean {
  const node = tx.getNode(nodeId);
  if (!node || node.Status !== "down" || node.CSIPluginsDetachedAt !== undefined) return false;
  if (nowMs - node.StatusUpdatedAt < boundMs) return false;
  tx.putNode({ ...node, CSIPluginsDetachedAt: nowMs });
  return true;
}
