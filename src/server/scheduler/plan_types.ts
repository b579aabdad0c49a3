/**
 * What a scheduling pass plans, whichever reconciler made it (plan.ts for service and batch jobs,
 * system_plan.ts for system and sysbatch jobs), and the names both give allocs. Types and
 * constants only.
 */
import type { Allocation } from "../../structs/alloc.js";
import type { Deployment } from "../../structs/deployment.js";
import type { AllocMetric } from "../../structs/eval.js";
import type { Job } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import type { WaitSignals } from "./blocked_wait.js";
import type { NodeUsageView } from "./node_usage.js";
import type { FollowupPlan } from "./reschedule_plan.js";

export interface PlacementFailure {
  group: string;
  /** Allocs of the group that found no node. */
  missing: number;
  /**
   * The names of those allocs that were not canaries, and how many canaries found no node: a plan
   * (job_plan.ts) counts them as placements and canaries the reconciler wanted, as Nomad's
   * DesiredTGUpdates do, whatever the node selection made of them.
   */
  names: string[];
  canaries: number;
  /** Nomad's AllocMetric of the group's first alloc that found no node; the others coalesce. */
  metrics: AllocMetric;
  /**
   * What the failed allocs wait for (blocked_wait.ts), when the group's allocs differ in what they
   * need (per_alloc volumes) and so the first one's metrics do not speak for the rest: merged over
   * every failed alloc. Absent: the metrics' own signals hold for the whole group.
   */
  signals?: WaitSignals;
}

export interface Plan {
  place: Allocation[];
  stop: { alloc: Allocation; description: string }[];
  failures: PlacementFailure[];
  /** Failed allocs whose reschedule links changed (NextAllocation, FollowupEvalID). */
  update: Allocation[];
  /** Delayed evals to create for failed allocs not yet due. */
  followups: FollowupPlan[];
  /** A deployment this pass creates (reconcile_update.ts), to store before its allocs. */
  newDeployment: Deployment | null;
  /** Deployments this pass cancels (an older version's, or the stopped job's). */
  cancelDeployments: Deployment[];
  /** The deployment of the job's version this pass works for, "" when none. */
  deploymentId: string;
  /**
   * Slots an update holds empty until a single-writer volume is free (reconcile_update.ts): not
   * failures, but the job must be evaluated again when a claim is freed, as a blocked one is.
   */
  heldSlots: number;
  /**
   * The plan stopped at its placement limit (PlanOptions.maxPlace) with allocs still to place: it
   * is a batch, and the pass plans the next one from the state this one leaves.
   */
  more: boolean;
}

/** How a plan is made. */
export interface PlanOptions {
  /** The scheduler's usage index, used only when it is at exactly the state's index. */
  usage?: NodeUsageView;
  /**
   * Stop after this many placements when the plan only places (no stop, reschedule link or
   * follow-up eval, whose records the pass writes with its eval): the rest is left for the next
   * batch (Plan.more). A function is asked before each placement with the count so far.
   */
  maxPlace?: number | ((placed: number) => boolean);
  /** The state's nodes, when the caller keeps them (node_list_cache.ts); else state.listNodes(). */
  listNodes?: () => Node[];
}

/** Nomad's alloc name: `<job>.<group>[<index>]`. */
export function allocName(job: Pick<Job, "ID">, group: string, index: number): string {
  return `${job.ID}.${group}[${index}]`;
}

/** Why the reconciler stops an alloc the node drainer marked for migration (Nomad's words). */
export const MIGRATE_DESCRIPTION = "alloc is being migrated";

/** Nomad's StatusAllocNotNeeded: the job no longer has the alloc's slot (a lower count, a removed group). */
export const NOT_NEEDED_DESCRIPTION = "alloc not needed due to job update";
/** Nomad's words for an alloc whose job is stopped. */
export const JOB_STOPPED_DESCRIPTION = "alloc not needed as job is stopped";

/** A plan with nothing in it yet. */
export function emptyPlan(): Plan {
  return {
    place: [],
    stop: [],
    failures: [],
    update: [],
    followups: [],
    newDeployment: null,
    cancelDeployments: [],
    deploymentId: "",
    heldSlots: 0,
    more: false,
  };
}
