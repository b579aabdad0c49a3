/**
 * The reconciler for service and batch jobs: compares a job's wanted allocs (Count per group,
 * named `<job>.<group>[<index>]`) with the ones it has and decides what to place and what to stop.
 * System and sysbatch jobs are handed to their own reconciler (system_plan.ts), after the stops
 * common to every job. Pure over a StateReader; the Scheduler applies the plan in the same write
 * transaction.
 */
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { newUuid } from "../../structs/ids.js";
import { runsOnEveryNode, type Job, type JobStatus } from "../../structs/job.js";
import { nextReschedule } from "../../structs/reschedule.js";
import type { StateReader } from "../state/store.js";
import { disconnectPlan } from "./disconnect_plan.js";
import { planContextOf, readyNodesInDCs } from "./feasibility.js";
import { NodeSample } from "./node_sample.js";
import { batchLimit, placeAll, placesOnly } from "./place_steps.js";
import { emptyPlan, type Plan, type PlanOptions } from "./plan_types.js";
import { openSlots, reconcileAllocs } from "./reconcile.js";
import { planReschedules } from "./reschedule_plan.js";
import { planUpdates } from "./reconcile_update.js";
import { systemPlanSteps } from "./system_plan.js";

/**
 * Allocs of this incarnation of the job. A job purged and registered again under the same ID is a
 * new job (a new CreateIndex); the old one's allocs, kept until GC so their claims are released,
 * are not its allocs (Nomad's AllocsByJob with anyCreateIndex=false).
 */
export function isAllocOfJob(a: Allocation, job: Pick<Job, "CreateIndex">): boolean {
  return a.Job.CreateIndex === job.CreateIndex;
}

/** Stops the live allocs of an earlier incarnation of the job (purged, then registered again). */
function stopPurgedIncarnations(plan: Plan, all: readonly Allocation[], job: Job): void {
  for (const a of all) {
    if (!isAllocOfJob(a, job) && a.DesiredStatus === "run" && !isAllocTerminal(a)) {
      plan.stop.push({ alloc: a, description: "alloc not needed as job is purged" });
    }
  }
}

/**
 * `job` is the stored record (with its indexes): new allocs snapshot it. `nowNs` stamps them.
 * `runningEvalId`: the delayed follow-up eval this pass runs ("" for any other pass).
 */
export function computePlan(
  state: StateReader,
  job: Job,
  nowNs: number,
  runningEvalId = "",
  opts: PlanOptions = {},
): Plan {
  const steps = planSteps(state, job, nowNs, runningEvalId, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * computePlan as steps: the generator pauses after each alloc it places (or fails to), so a caller
 * can yield to the event loop between them (Scheduler). It only reads `state`; a caller that lets
 * other work run between steps must check that nothing was written meanwhile before it trusts the
 * plan (the reads of a plan must all see one state).
 */
export function* planSteps(
  state: StateReader,
  job: Job,
  nowNs: number,
  runningEvalId = "",
  opts: PlanOptions = {},
): Generator<void, Plan, void> {
  const all = state.allocsByJob(job.Namespace, job.ID);
  const existing = all.filter((a) => isAllocOfJob(a, job));
  const plan = emptyPlan();
  stopPurgedIncarnations(plan, all, job);
  if (runsOnEveryNode(job.Type))
    return yield* systemPlanSteps(state, job, existing, plan, nowNs, runningEvalId, opts);
  const upd = planUpdates(state, job, existing, nowNs, newUuid);
  plan.heldSlots = upd.hold.size;
  plan.cancelDeployments = upd.cancel;
  if (upd.created) plan.newDeployment = upd.deployment;
  plan.deploymentId = upd.deployment?.ID ?? "";
  const disc = disconnectPlan(existing);
  const reconciled = reconcileAllocs({ job, existing, update: upd, disconnect: disc });
  plan.stop.push(...reconciled.stop);
  if (job.Stop) return plan;
  // The job's allocs were read above; a big job's take a while: let the caller yield before the nodes.
  yield;
  const ctx = planContextOf(state, plan.place, plan.stop, all, opts.usage);
  const { ready, available } = readyNodesInDCs(opts.listNodes?.() ?? state.listNodes(), job);
  const nodes = new NodeSample(ready, `${job.Namespace}\u0000${job.ID}\u0000${state.index()}`);
  // The reads above are a pass's biggest single stretch: let the caller yield before placing.
  yield;
  const resched = planReschedules(state, job, existing, openSlots(reconciled), nowNs, runningEvalId);
  plan.followups = resched.followups;
  plan.update.push(...resched.update);
  const full = batchLimit(plan, placesOnly(plan, resched, disc), opts.maxPlace);
  yield* placeAll({ job, nowNs, plan, ctx, nodes, available, upd, resched, disc, reconciled, full });
  return plan;
}

/**
 * Nomad's job status (its getJobStatus): running while any alloc is non-terminal, and a system job
 * always until stopped; dead once stopped (or a batch or sysbatch job finished) with every alloc
 * terminal; pending while work is still to come (a blocked or delayed eval, or a failed alloc whose
 * reschedule is due), or nothing was placed yet;
 * dead when every alloc is terminal and nothing more will be tried (failed allocs whose reschedule
 * policy is exhausted). `allocs` are the job's current incarnation's.
 */
export function jobStatus(job: Job, allocs: Allocation[], liveEval = false): JobStatus {
  if (allocs.some((a) => !isAllocTerminal(a))) return "running";
  if (job.Stop) return "dead";
  // Nomad: a system job runs until it is stopped (a node may join at any time); a sysbatch job is
  // done once every alloc it placed has ended.
  if (job.Type === "system") return "running";
  if (job.Type === "sysbatch" && allocs.length > 0 && !liveEval) return "dead";
  if (job.Type === "batch" && allocs.length > 0 && allocs.some((a) => a.ClientStatus === "complete")) {
    const done = new Set(allocs.filter((a) => a.ClientStatus === "complete").map((a) => a.Name));
    const wanted = job.TaskGroups.reduce((n, g) => n + g.Count, 0);
    if (done.size >= wanted) return "dead";
  }
  if (liveEval || allocs.length === 0) return "pending";
  const awaiting = allocs.some((a) => !a.NextAllocation && nextReschedule(a)?.eligible === true);
  if (awaiting) return "pending";
  // Only an exhausted policy ends a job here; other terminal allocs (a service's completed or lost
  // ones) are replaced by the pass that follows their update.
  return allocs.some((a) => a.ClientStatus === "failed") ? "dead" : "pending";
}
