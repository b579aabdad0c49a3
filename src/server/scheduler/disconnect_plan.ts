/**
 * The scheduler's part of Nomad's disconnect strategy (structs/disconnect.ts), pure: which unknown
 * allocs get a replacement now, and which of two allocs of one slot stops once a disconnected node
 * reported again.
 *
 * - An `unknown` alloc (its node disconnected within the group's `lost_after`) keeps its slot
 *   unless its group says `replace` (Nomad's default): then the slot is placed again elsewhere,
 *   the replacement linked by PreviousAllocation. The unknown alloc is not stopped — its node cannot
 *   hear it — and keeps its volume claims, so a single-writer volume stays with it and the
 *   replacement waits, blocked, until the claim is freed (never two writers).
 * - When the node reports again, the reconnected alloc (it was unknown, AllocStates says so) and the
 *   replacement both run; `reconcile` picks the one that stays: `keep_original`,
 *   `keep_replacement`, `longest_running` (the one whose tasks started first), or `best_score`.
 *   berth keeps no placement scores on allocs, so its `best_score` keeps the original — the node
 *   the scheduler chose first, where the volume is already staged — unless only the replacement runs.
 *   Whatever the option, an alloc that is not running loses to one that is.
 */
import { allocTaskGroup, isClientTerminal, type Allocation } from "../../structs/alloc.js";
import { disconnectOf, wasDisconnected, type ReconcileOption } from "../../structs/disconnect.js";

/** Nomad's words for a replacement stopped because the original's node came back. */
export const RECONNECTED_DESCRIPTION = "alloc not needed due to disconnected client reconnect";
/** berth's words for an original stopped because its replacement is kept. */
export const REPLACED_DESCRIPTION = "alloc not needed: its replacement is kept after its node reconnected";

export interface DisconnectPlan {
  /** Unknown allocs whose slot is placed again now, by alloc name. */
  replace: Map<string, Allocation>;
  /** The losers of a reconnect, by alloc ID, with the stop description. */
  stop: Map<string, string>;
}

function isLive(a: Allocation): boolean {
  return a.DesiredStatus === "run" && !isClientTerminal(a.ClientStatus);
}

/** The earliest task start (ms), or Infinity when no task has started. */
function startedAtMs(a: Allocation): number {
  let first = Infinity;
  for (const t of Object.values(a.TaskStates ?? {})) {
    const at = t.StartedAt === null ? NaN : Date.parse(t.StartedAt);
    if (!Number.isNaN(at) && at < first) first = at;
  }
  return first;
}

/** The alloc of the pair that stays (pure; exported for its unit test). */
export function pickReconnected(
  option: ReconcileOption,
  original: Allocation,
  replacement: Allocation,
): Allocation {
  const origRuns = original.ClientStatus === "running";
  const replRuns = replacement.ClientStatus === "running";
  if (origRuns !== replRuns) return origRuns ? original : replacement;
  switch (option) {
    case "keep_replacement":
      return replacement;
    case "longest_running":
      return startedAtMs(replacement) < startedAtMs(original) ? replacement : original;
    case "keep_original":
    case "best_score":
      return original;
  }
}

export function disconnectPlan(existing: readonly Allocation[]): DisconnectPlan {
  const out: DisconnectPlan = { replace: new Map(), stop: new Map() };
  const byName = new Map<string, Allocation[]>();
  for (const a of existing) {
    if (!isLive(a)) continue;
    const list = byName.get(a.Name);
    if (list) list.push(a);
    else byName.set(a.Name, [a]);
  }
  for (const [name, live] of byName) {
    const unknown = live.filter((a) => a.ClientStatus === "unknown");
    const reporting = live.filter((a) => a.ClientStatus !== "unknown");
    if (unknown.length > 0 && reporting.length === 0) {
      const u = unknown[0]!;
      const group = allocTaskGroup(u);
      if (group && disconnectOf(group).Replace) out.replace.set(name, u);
      continue;
    }
    // A reconnected original and its replacement: one stays.
    const original = reporting.find((a) => wasDisconnected(a) && a.NextAllocation !== undefined);
    if (!original) continue;
    const replacement = reporting.find((a) => a.ID === original.NextAllocation);
    const group = allocTaskGroup(original);
    if (!replacement || !group) continue;
    const keep = pickReconnected(disconnectOf(group).Reconcile, original, replacement);
    if (keep === original) out.stop.set(replacement.ID, RECONNECTED_DESCRIPTION);
    else out.stop.set(original.ID, REPLACED_DESCRIPTION);
  }
  return out;
}
