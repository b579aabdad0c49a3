/**
 * A scheduling pass planned ahead of its write transaction, yielding to the event loop as it goes,
 * so a long pass (a big job on many nodes) never holds the loop for more than about
 * YIELD_AFTER_MS at a time: heartbeats and HTTP requests are served between its steps.
 *
 * Correctness: the plan is a pure function of the store's state (plan.ts planSteps only reads). It
 * is computed from reads made across several turns of the loop, so it is trusted only if no write
 * landed in between: the store's index is the same after the last step as before the first (a
 * write that moved it aborts the attempt at the next yield). The write transaction then checks the
 * index once more (evaluateIn): equal, it applies this plan — exactly what it would have computed
 * itself, since every record it would read is the one the plan read; moved (a write committed
 * between the plan and the transaction), it computes the plan again inside the transaction, as
 * every pass did before. So a yield can delay a pass, never apply a plan made from a stale state.
 */
import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { NS_PER_MS } from "../../structs/job.js";
import type { StateStore } from "../state/store.js";
import type { NodeListCache } from "./node_list_cache.js";
import type { NodeUsageIndex } from "./node_usage.js";
import { planSteps } from "./plan.js";
import type { Plan } from "./plan_types.js";
import { stillValidSince } from "./rebase.js";

/** Longest stretch of planning between two yields to the event loop. */
export const YIELD_AFTER_MS = 5;
/** Attempts to plan ahead before a pass falls back to planning inside its transaction. */
export const PLAN_AHEAD_ATTEMPTS = 3;

export interface PlannedAhead {
  /**
   * A store index the plan is the plan of: the one its reads saw, or a later one when every write
   * since only freed what it relied on (rebase.ts).
   */
  index: number;
  /**
   * The store index its reads saw, which a rebase never moves: its placement failures are known to
   * hold at this index only, since a write that only freed capacity leaves the plan valid but may
   * have made a failed placement possible (the blocked-set guard in scheduler.ts compares it).
   */
  readIndex: number;
  /** The time the plan stamps its allocs with (unix ns); the pass records it too. */
  nowNs: number;
  plan: Plan;
}

/**
 * Plans the job's pass ahead, or returns undefined when the pass is best left to the transaction:
 * the job is gone or stopped (the transaction writes before it plans), the follow-up eval to run
 * is no longer pending, or writes kept landing during every attempt.
 */
export async function planAhead(
  store: StateStore,
  namespace: string,
  jobId: string,
  followupEvalId: string | undefined,
  opts: { usage?: NodeUsageIndex; maxPlace?: number; nodes?: NodeListCache } = {},
): Promise<PlannedAhead | undefined> {
  for (let attempt = 0; attempt < PLAN_AHEAD_ATTEMPTS; attempt++) {
    // The usage index is brought to the index the plan reads at, in the same turn (node_usage.ts).
    opts.usage?.refresh(store);
    let index = store.index();
    const readIndex = index;
    const job = store.getJob(namespace, jobId);
    if (!job || job.Stop) return undefined;
    let runningEvalId = "";
    if (followupEvalId) {
      const running = store.getEval(followupEvalId);
      if (running?.Status !== "pending") return undefined;
      runningEvalId = running.ID;
    }
    const nowNs = Date.now() * NS_PER_MS;
    const steps = planSteps(store, job, nowNs, runningEvalId, {
      usage: opts.usage,
      maxPlace: opts.maxPlace,
      listNodes: opts.nodes ? () => opts.nodes!.list(store) : undefined,
    });
    let sliceStart = performance.now();
    let r = steps.next();
    let stale = false;
    while (!r.done) {
      if (performance.now() - sliceStart >= YIELD_AFTER_MS) {
        await yieldToLoop();
        if (store.index() !== index) {
          // Writes that only freed what the plan relies on leave it valid (rebase.ts): it is the
          // plan of the state as it is now, so it is carried on at the new index.
          if (!stillValidSince(store, index)) {
            stale = true;
            break;
          }
          index = store.index();
        }
        sliceStart = performance.now();
      }
      r = steps.next();
    }
    if (!stale && r.done) return { index, readIndex, nowNs, plan: r.value };
  }
  return undefined;
}
