/**
 * Nomad's disconnect strategy of a task group, read from the kept `disconnect` block and the older
 * group fields (`max_client_disconnect`, `stop_after_client_disconnect`), with Nomad's defaults:
 * `replace = true`, `reconcile = "best_score"`. Pure.
 *
 * - `lost_after` (or `max_client_disconnect`): a node that misses its heartbeat is `disconnected`,
 *   not down, and the group's allocs on it are `unknown` (still desired to run, claims kept) for
 *   this long before they are lost (server/node_disconnect.ts);
 * - `replace`: whether the scheduler places a replacement while an alloc is unknown;
 * - `reconcile`: which of the two runs on when the node comes back (scheduler/reconnect_plan.ts);
 * - `stop_on_client_after` (or `stop_after_client_disconnect`): the node agent stops the alloc by
 *   itself after this long without contact (client/fence/).
 */
import { allocTaskGroup, type Allocation, type AllocState } from "./alloc.js";
import { NS_PER_MS, type TaskGroup } from "./job.js";

export const RECONCILE_OPTIONS = [
  "best_score",
  "keep_original",
  "keep_replacement",
  "longest_running",
] as const;
export type ReconcileOption = (typeof RECONCILE_OPTIONS)[number];

export interface DisconnectStrategy {
  /** ns; 0: the group's allocs are lost as soon as their node is. */
  LostAfter: number;
  /** ns; null: the node agent keeps the allocs running while cut off. */
  StopOnClientAfter: number | null;
  Replace: boolean;
  Reconcile: ReconcileOption;
}

type DisconnectFields = Pick<TaskGroup, "Disconnect" | "MaxClientDisconnect" | "StopAfterClientDisconnect">;

function nsOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
}

/** The group's strategy, canonical (the block wins over the older fields, as in Nomad). */
export function disconnectOf(group: DisconnectFields): DisconnectStrategy {
  const d = group.Disconnect ?? {};
  const reconcile = RECONCILE_OPTIONS.find((o) => o === d.Reconcile) ?? "best_score";
  return {
    LostAfter: nsOrNull(d.LostAfter) || nsOrNull(group.MaxClientDisconnect) || 0,
    StopOnClientAfter: nsOrNull(d.StopOnClientAfter) ?? nsOrNull(group.StopAfterClientDisconnect),
    Replace: typeof d.Replace === "boolean" ? d.Replace : true,
    Reconcile: reconcile,
  };
}

/** The alloc's `lost_after` in ms; 0 when its group has none (or the alloc has no group). */
export function lostAfterMsOf(alloc: Allocation): number {
  const group = allocTaskGroup(alloc);
  return group ? disconnectOf(group).LostAfter / NS_PER_MS : 0;
}

/** Nomad's AllocState time is an RFC 3339 string; berth writes ISO 8601 (a subset). */
function stateTimeMs(s: AllocState): number {
  const t = Date.parse(s.Time);
  return Number.isNaN(t) ? 0 : t;
}

/** When the alloc last became `unknown` (wall ms), or undefined when it never did. */
export function unknownSinceMs(alloc: Pick<Allocation, "AllocStates">): number | undefined {
  const states = alloc.AllocStates ?? [];
  for (let i = states.length - 1; i >= 0; i--) {
    const s = states[i]!;
    if (s.Field === "ClientStatus") return s.Value === "unknown" ? stateTimeMs(s) : undefined;
  }
  return undefined;
}

/** True when the alloc was `unknown` at some point (its node was disconnected) and reported since. */
export function wasDisconnected(alloc: Pick<Allocation, "AllocStates">): boolean {
  return (alloc.AllocStates ?? []).some((s) => s.Field === "ClientStatus" && s.Value === "unknown");
}

/** The AllocStates with one more ClientStatus transition (capped, oldest dropped). */
export function withClientStatusState(
  alloc: Pick<Allocation, "AllocStates">,
  value: string,
  nowMs: number,
): AllocState[] {
  const next = [
    ...(alloc.AllocStates ?? []),
    { Field: "ClientStatus", Value: value, Time: new Date(nowMs).toISOString() },
  ];
  return next.slice(-MAX_ALLOC_STATES);
}

/** An alloc that disconnects and reconnects all day keeps only its recent transitions. */
export const MAX_ALLOC_STATES = 10;
