/**
 * Whether this server may vouch for a node's liveness: a heartbeat it acknowledges renews the
 * node's lease, and the node then keeps its single-writer tasks running (client/fence/). A server
 * of an etcd cluster that has not had its own lease confirmed for as long as a leader may go
 * unconfirmed (the lease TTL less the step-down margin) may have been hung, paused or cut off from
 * etcd — the leader may meanwhile have marked the node down and begun the fence hold — so it
 * refuses the heartbeat and the node moves to another server. A cluster member still starting does
 * not vouch yet. (A single server is the leader itself and always vouches: solo_cluster.ts.)
 */
import type { ClusterView } from "./cluster_view.js";
import { STEP_DOWN_MARGIN_MS } from "./election.js";

/** Why this server cannot vouch for a node now, or undefined when it can. */
export function contactRefusal(
  cluster: Pick<ClusterView, "lastContactMs"> | undefined,
  leaseTtlSec: number,
): string | undefined {
  if (!cluster) return "this server is still joining its cluster";
  const since = cluster.lastContactMs();
  const bound = leaseTtlSec * 1000 - STEP_DOWN_MARGIN_MS;
  return since > bound
    ? `this server has had no confirmed contact with etcd for ${Math.round(since)} ms`
    : undefined;
}
