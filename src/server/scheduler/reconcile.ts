/**
 * The reconcile half of a service or batch job's pass (plan.ts), pure: given the job, its allocs of
 * this incarnation and what the update (reconcile_update.ts) and disconnect (disconnect_plan.ts)
 * halves decided, which allocs stop (and why), which keep their slot, and which slots are open for
 * placement. No state, no nodes, no I/O: every rule is tested on plain data (reconcile.test.ts).
 * The placement of the open slots is place_steps.ts's.
 */
import { isClientTerminal, shouldMigrate, type Allocation } from "../../structs/alloc.js";
import type { Job } from "../../structs/job.js";
import type { DisconnectPlan } from "./disconnect_plan.js";
import {
  allocName,
  JOB_STOPPED_DESCRIPTION,
  MIGRATE_DESCRIPTION,
  NOT_NEEDED_DESCRIPTION,
} from "./plan_types.js";
import { HANDOVER_DESCRIPTION, UPDATE_DESCRIPTION, type UpdatePlan } from "./reconcile_update.js";

/** What becomes of one live alloc (DesiredStatus run, not client-terminal) in this pass. */
export type AllocDecision =
  /** It keeps its slot (the job's version, or an old one the update strategy keeps for now). */
  | { kind: "keep" }
  /** Unknown, its slot placed again elsewhere: it is neither stopped nor counted as the slot's. */
  | { kind: "replaced" }
  | { kind: "stop"; description: string };

export interface ReconcileInput {
  job: Job;
  /** The job's allocs of its current incarnation (plan.ts isAllocOfJob). */
  existing: readonly Allocation[];
  update: Pick<UpdatePlan, "keep" | "handover">;
  disconnect: DisconnectPlan;
}

export interface Reconciled {
  /** Allocs to stop, in the order of `existing`. */
  stop: { alloc: Allocation; description: string }[];
  /** The slot names the job wants (none once stopped). */
  wanted: Set<string>;
  /** Live allocs that keep their slot, by name. */
  running: Map<string, Allocation>;
  /** A batch job's slots already completed at this version: never placed again. */
  completed: Set<string>;
}

/** The slot names of every group's Count, or none for a stopped job. */
export function wantedNames(job: Job): Set<string> {
  const wanted = new Set<string>();
  if (job.Stop) return wanted;
  for (const g of job.TaskGroups) {
    for (let i = 0; i < g.Count; i++) wanted.add(allocName(job, g.Name, i));
  }
  return wanted;
}

/**
 * The decision for one live alloc, rules in order: a reconnect's loser stops; an unknown alloc
 * being replaced is left alone; a slot the job no longer wants stops; a drain's migration stops;
 * an old version stays while the update keeps it, else stops (a hand-over, or Nomad's update).
 */
export function decideAlloc(
  a: Allocation,
  input: ReconcileInput,
  wanted: ReadonlySet<string>,
): AllocDecision {
  const { job, update, disconnect } = input;
  const reconnectLoss = disconnect.stop.get(a.ID);
  if (reconnectLoss !== undefined) return { kind: "stop", description: reconnectLoss };
  if (disconnect.replace.get(a.Name) === a) return { kind: "replaced" };
  if (!wanted.has(a.Name)) {
    return { kind: "stop", description: job.Stop ? JOB_STOPPED_DESCRIPTION : NOT_NEEDED_DESCRIPTION };
  }
  if (shouldMigrate(a)) return { kind: "stop", description: MIGRATE_DESCRIPTION };
  if (a.Job.Version === job.Version || update.keep.has(a.ID)) return { kind: "keep" };
  return { kind: "stop", description: update.handover.has(a.ID) ? HANDOVER_DESCRIPTION : UPDATE_DESCRIPTION };
}

/** Every live alloc's decision, gathered: what plan.ts stops, and which slots are taken. */
export function reconcileAllocs(input: ReconcileInput): Reconciled {
  const { job, existing } = input;
  const wanted = wantedNames(job);
  const out: Reconciled = { stop: [], wanted, running: new Map(), completed: new Set() };
  for (const a of existing) {
    if (a.DesiredStatus !== "run" || isClientTerminal(a.ClientStatus)) continue;
    const d = decideAlloc(a, input, wanted);
    if (d.kind === "stop") out.stop.push({ alloc: a, description: d.description });
    else if (d.kind === "keep") out.running.set(a.Name, a);
  }
  if (job.Type === "batch" && !job.Stop) {
    for (const a of existing) {
      if (a.ClientStatus === "complete" && a.Job.Version === job.Version) out.completed.add(a.Name);
    }
  }
  return out;
}

/** The wanted slots neither kept by a live alloc nor completed, in wanted (group, index) order. */
export function openSlots(r: Reconciled): string[] {
  return [...r.wanted].filter((n) => !r.running.has(n) && !r.completed.has(n));
}
