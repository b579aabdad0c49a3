/**
 * What a node may do with volumes: only what its own allocations need. The agent connection has
 * already proved which node is calling (agent.ts, node_auth.ts); these checks keep that node to
 * the volumes the allocations placed on it request, so a node cannot claim, look up or take the
 * secrets of any other volume by naming it (Nomad's state store refuses a claim for an alloc that
 * does not exist; berth also holds the volume to the alloc's own task group).
 */
import { allocIndex, allocTaskGroup, type Allocation } from "../../structs/alloc.js";
import { BerthError } from "../../structs/errors.js";
import { volumeSourceForAlloc } from "../../structs/job.js";
import type { ClaimMode } from "../../structs/volume.js";
import type { StateReader } from "../state/store.js";

/** The alloc's csi volume requests that resolve to `volumeId` in `namespace` (per_alloc included). */
function requestsFor(alloc: Allocation, namespace: string, volumeId: string) {
  if (alloc.Namespace !== namespace) return [];
  const group = allocTaskGroup(alloc);
  return Object.values(group?.Volumes ?? {}).filter(
    (r) => r.Type === "csi" && volumeSourceForAlloc(r, allocIndex(alloc)) === volumeId,
  );
}

/**
 * Refuses a claim the alloc's task group did not ask for: another volume, another namespace, or a
 * write claim where every request for the volume is read-only.
 */
export function checkAllocClaim(
  alloc: Allocation,
  namespace: string,
  volumeId: string,
  mode: ClaimMode,
): void {
  const reqs = requestsFor(alloc, namespace, volumeId);
  if (reqs.length === 0) {
    throw new BerthError(
      "ERR_PERMISSION_DENIED",
      `allocation ${alloc.ID} does not request volume ${JSON.stringify(volumeId)} in namespace ${JSON.stringify(namespace)}`,
    );
  }
  if (mode === "write" && reqs.every((r) => r.ReadOnly)) {
    throw new BerthError(
      "ERR_PERMISSION_DENIED",
      `allocation ${alloc.ID} requests volume ${JSON.stringify(volumeId)} read-only and cannot claim it for writing`,
    );
  }
}

/**
 * Refuses a volume lookup for one alloc unless that alloc runs on the node and requests the
 * volume: the same answer as checkNodeUsesVolume gives for that alloc, with one alloc read. The
 * refusal is the same whether the alloc is missing, elsewhere or asks for another volume, so a
 * node learns nothing about allocs that are not its own.
 */
export function checkNodeAllocUsesVolume(
  state: Pick<StateReader, "getAlloc">,
  nodeId: string,
  allocId: string,
  namespace: string,
  volumeId: string,
): void {
  const alloc = state.getAlloc(allocId);
  if (alloc && alloc.NodeID === nodeId && requestsFor(alloc, namespace, volumeId).length > 0) return;
  throw new BerthError(
    "ERR_PERMISSION_DENIED",
    `no allocation ${allocId} on node ${nodeId} requests volume ${JSON.stringify(volumeId)} in namespace ${JSON.stringify(namespace)}`,
  );
}

/** Refuses a volume lookup by a node none of whose allocations requests that volume (a scan). */
export function checkNodeUsesVolume(
  state: Pick<StateReader, "allocsByNode">,
  nodeId: string,
  namespace: string,
  volumeId: string,
): void {
  if (state.allocsByNode(nodeId).some((a) => requestsFor(a, namespace, volumeId).length > 0)) return;
  throw new BerthError(
    "ERR_PERMISSION_DENIED",
    `no allocation on node ${nodeId} requests volume ${JSON.stringify(volumeId)} in namespace ${JSON.stringify(namespace)}`,
  );
}
