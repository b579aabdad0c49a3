/**
 * How a big scheduling pass is applied in batches (Scheduler.pass): its plan is made ahead once
 * and written BATCH_PLACEMENTS placements per transaction, so no single transaction holds the event
 * loop for long. Each batch after the first takes the rest of the plan only while nothing else was
 * written since the batch before it (evaluateIn compares the store index): the rest of a plan made
 * at index I, less what earlier batches wrote, is exactly the plan of the state those batches left
 * (their placements were already counted as the plan's own). Otherwise the rest is planned again.
 */
import type { Node } from "../../structs/node.js";
import type { PlannedAhead } from "./plan_ahead.js";

/** Placements one write transaction applies at most; a bigger plan is applied in batches. */
export const BATCH_PLACEMENTS = 50;
/**
 * Placements one plan made ahead covers at most, so an attempt that a write landing meanwhile makes
 * stale is bounded, while each new plan's reads of the job's allocs stay few.
 */
export const PLAN_AHEAD_PLACEMENTS = 500;
/** How long a batch planned inside its transaction (the plan made ahead was stale) may plan. */
export const IN_TXN_PLAN_MS = 10;

/** A pass applied in batches: what the batches before this one placed. */
export interface Batching {
  placedBefore: readonly string[];
  /** The pass's node list when still current (node_list_cache.ts `cached`), for a plan made here. */
  cachedNodes?: () => Node[] | undefined;
  /**
   * Whether a plan made at `from` is still the plan of the state the transaction sees (rebase.ts
   * stillValidSince over the store, whose reads inside the transaction include the batch's earlier
   * writes): the txns queued ahead of this one in its group-commit batch are mostly the nodes' own
   * status updates and claims, which leave the plan valid.
   */
  stillValid?: (from: number) => boolean;
}

/**
 * The first batch of a plan made ahead, and the rest. Only a plan that places and nothing else is
 * cut (plan.ts PlanOptions.maxPlace says why); the deployment goes with the first batch.
 */
export function sliceOf(ahead: PlannedAhead): [PlannedAhead, PlannedAhead | undefined] {
  const { plan } = ahead;
  const onlyPlaces = plan.stop.length === 0 && plan.update.length === 0 && plan.followups.length === 0;
  if (!onlyPlaces || plan.place.length <= BATCH_PLACEMENTS) return [ahead, undefined];
  return [
    { ...ahead, plan: { ...plan, place: plan.place.slice(0, BATCH_PLACEMENTS), more: true } },
    {
      ...ahead,
      plan: {
        ...plan,
        place: plan.place.slice(BATCH_PLACEMENTS),
        newDeployment: null,
        cancelDeployments: [],
      },
    },
  ];
}
