/**
 * Node loss, applied inside one write transaction. A node that missed its heartbeat is marked
 * `down` and every alloc on it that has not finished becomes ClientStatus `lost` with DesiredStatus
 * `stop` (Nomad's rule), so the scheduler places replacements elsewhere and the volumewatcher
 * releases their claims without the node step. `lost` is final: a node that comes back sees
 * DesiredStatus stop in GetAllocs and stops what it still runs, and its reports never turn a lost
 * alloc live again (see NodeEndpoint).
 *
 * Nomad's disconnect strategy (structs/disconnect.ts): an alloc whose group has a `lost_after`
 * window becomes `unknown` instead — still desired to run, its claims kept, its slot replaced only
 * when the group says `replace` — and the node is `disconnected`, not down. When the window has
 * passed with the node still out of contact, expireUnknownAllocs makes such allocs lost as above;
 * the node is down once none is left unknown. Every expiry also restarts the node's out-of-contact
 * episode (StatusUpdatedAt), so the volumewatcher's fence hold for the newly lost allocs' claims
 * counts from the moment they were lost, not from the disconnection (docs/design.md, "Never two
 * writers"). Windows are wall-clock times from the record (Nomad's), so a new leader honours them.
 */
import { isAllocTerminal, type Allocation } from "../structs/alloc.js";
import { lostAfterMsOf, unknownSinceMs, withClientStatusState } from "../structs/disconnect.js";
import { NS_PER_MS } from "../structs/job.js";
import { isNodeOutOfContact } from "../structs/node.js";
import type { StateWriter } from "./state/store.js";

export const LOST_DESCRIPTION = "alloc is lost since its node is down";
/** Nomad's words for an alloc of a disconnected node. */
export const UNKNOWN_DESCRIPTION = "alloc is unknown since its node is disconnected";

export interface JobRef {
  namespace: string;
  id: string;
}

export interface NodeLoss {
  /** The jobs whose allocs were lost or became unknown (to re-evaluate). */
  jobs: JobRef[];
  /** When the next unknown alloc's window ends (wall ms); undefined when none is left unknown. */
  nextExpiryMs: number | undefined;
}

function lost(a: Allocation, nowMs: number): Allocation {
  return {
    ...a,
    ClientStatus: "lost",
    ClientDescription: LOST_DESCRIPTION,
    DesiredStatus: "stop",
    DesiredDescription: LOST_DESCRIPTION,
    ModifyTime: nowMs * NS_PER_MS,
    ...(a.AllocStates ? { AllocStates: withClientStatusState(a, "lost", nowMs) } : {}),
  };
}

function earlier(a: number | undefined, b: number): number {
  return a === undefined || b < a ? b : a;
}

/** Marks the node down (or disconnected); null when it was not up. */
export function markNodeDown(
  tx: StateWriter,
  nodeId: string,
  nowMs: number,
  reason: string,
): NodeLoss | null {
  const node = tx.getNode(nodeId);
  if (!node || isNodeOutOfContact(node)) return null;
  const jobs = new Map<string, JobRef>();
  let nextExpiryMs: number | undefined;
  for (const a of tx.allocsByNode(nodeId)) {
    if (isAllocTerminal(a)) continue;
    const window = a.DesiredStatus === "run" ? lostAfterMsOf(a) : 0;
    if (window > 0) {
      tx.putAlloc({
        ...a,
        ClientStatus: "unknown",
        ClientDescription: UNKNOWN_DESCRIPTION,
        AllocStates: withClientStatusState(a, "unknown", nowMs),
        ModifyTime: nowMs * NS_PER_MS,
      });
      nextExpiryMs = earlier(nextExpiryMs, nowMs + window);
    } else tx.putAlloc(lost(a, nowMs));
    jobs.set(`${a.Namespace}/${a.JobID}`, { namespace: a.Namespace, id: a.JobID });
  }
  const Status = nextExpiryMs === undefined ? "down" : "disconnected";
  tx.putNode({ ...node, Status, StatusDescription: reason, StatusUpdatedAt: nowMs });
  return { jobs: [...jobs.values()], nextExpiryMs };
}

/**
 * Loses the unknown allocs of an out-of-contact node whose window has passed; null when the node is
 * gone or back in contact (its agent reports what its allocs are).
 */
export function expireUnknownAllocs(tx: StateWriter, nodeId: string, nowMs: number): NodeLoss | null {
  const node = tx.getNode(nodeId);
  if (!node || !isNodeOutOfContact(node)) return null;
  const jobs = new Map<string, JobRef>();
  let nextExpiryMs: number | undefined;
  for (const a of tx.allocsByNode(nodeId)) {
    if (a.ClientStatus !== "unknown") continue;
    const endsAt = (unknownSinceMs(a) ?? nowMs) + lostAfterMsOf(a);
    if (endsAt > nowMs && a.DesiredStatus === "run") {
      nextExpiryMs = earlier(nextExpiryMs, endsAt);
      continue;
    }
    tx.putAlloc(lost(a, nowMs));
    jobs.set(`${a.Namespace}/${a.JobID}`, { namespace: a.Namespace, id: a.JobID });
  }
  // Down once nothing is left unknown, also when the node's own reports ended the last ones.
  const nowDown = nextExpiryMs === undefined && node.Status === "disconnected";
  if (jobs.size > 0 || nowDown) {
    tx.putNode({
      ...node,
      Status: nextExpiryMs === undefined ? "down" : "disconnected",
      StatusUpdatedAt: nowMs,
    });
  }
  return { jobs: [...jobs.values()], nextExpiryMs };
}

/** When the node's next unknown alloc's window ends (wall ms), read-only; undefined: none. */
export function nextUnknownExpiry(allocs: readonly Allocation[]): number | undefined {
  let next: number | undefined;
  for (const a of allocs) {
    if (a.ClientStatus !== "unknown") continue;
    next = earlier(next, (unknownSinceMs(a) ?? 0) + lostAfterMsOf(a));
  }
  return next;
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
