/**
 * Which allocs a node agent stops by itself when it cannot renew its lease with the servers, and
 * after how long (pure; the loop that applies it is self_fence.ts).
 *
 * Two rules, the shorter wins:
 * - **single-writer fence** (berth's own): an alloc holding a write claim on a single-writer
 *   volume (a `csi` volume request, not read-only, access mode single-node-writer or
 *   multi-node-single-writer, or none given: the volume's mode is then unknown here, so the alloc is
 *   treated as a writer) is stopped once the lease is older than the heartbeat TTL. The servers
 *   cannot mark the node down before a TTL has passed since the last renewal they answered, and they
 *   then hold such a claim for a further fence bound longer than any kill timeout before another
 *   alloc may take it (docs/design.md, "Never two writers"), so the two never overlap. A group with
 *   Nomad's `disconnect { lost_after = L }` keeps running L longer: the servers keep its allocs
 *   `unknown`, claims held, for L after marking the node disconnected, and hold the claim for the
 *   fence bound only from when they lose them;
 * - **Nomad's disconnect strategy**: a group with `disconnect { stop_on_client_after = D }` (or the
 *   older `stop_after_client_disconnect = D`) has every alloc stopped once the lease is older than D.
 *
 * The lease age is measured from the moment the node *sent* the last renewal the servers
 * acknowledged, so it can only overstate how long the node has been cut off.
 */
import { allocTaskGroup, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { disconnectOf } from "../../structs/disconnect.js";
import { isSingleWriterAccessMode } from "../../structs/single_writer.js";
import { NS_PER_MS, type TaskGroup } from "../../structs/job.js";

export interface FencePolicy {
  /** Stop the alloc once the lease is older than this (ms). */
  afterMs: number;
  /** Why, for the task event and the log. */
  rule: "single-writer" | "stop_on_client_after";
}

/** True when the group writes a CSI volume that allows one writer at a time. */
export function holdsSingleWriterClaim(group: Pick<TaskGroup, "Volumes">): boolean {
  return Object.values(group.Volumes ?? {}).some(
    (v) => v.Type === "csi" && !v.ReadOnly && (v.AccessMode === "" || isSingleWriterAccessMode(v.AccessMode)),
  );
}

/** The fence that applies to `alloc` on a node whose heartbeat TTL is `ttlMs`; null: none. */
export function fencePolicy(alloc: Allocation, ttlMs: number): FencePolicy | null {
  if (isAllocTerminal(alloc)) return null;
  const group = allocTaskGroup(alloc);
  if (!group) return null;
  const rules: FencePolicy[] = [];
  const strategy = disconnectOf(group);
  if (holdsSingleWriterClaim(group))
    rules.push({ afterMs: ttlMs + strategy.LostAfter / NS_PER_MS, rule: "single-writer" });
  if (strategy.StopOnClientAfter !== null)
    rules.push({ afterMs: strategy.StopOnClientAfter / NS_PER_MS, rule: "stop_on_client_after" });
  return rules.reduce<FencePolicy | null>(
    (min, r) => (min === null || r.afterMs < min.afterMs ? r : min),
    null,
  );
}

/** The reason a fenced alloc's tasks are killed with (task event, alloc description). */
export function fenceReason(policy: FencePolicy, leaseAgeMs: number): string {
  const secs = (leaseAgeMs / 1000).toFixed(1);
  return policy.rule === "single-writer"
    ? `no contact with the servers for ${secs} s: stopped by the node to keep its single-writer volume single-writer`
    : `no contact with the servers for ${secs} s: stopped by the node (disconnect.stop_on_client_after)`;
}
