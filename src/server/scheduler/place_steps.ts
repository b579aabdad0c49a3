/**
 * The placement half of a service or batch job's pass (plan.ts): places the open slots that
 * reconcile.ts left, then the update's canaries, one alloc per step, so the caller can yield
 * between them. Failures coalesce per group (coalesceFailure); a batch stops at its limit.
 */
import type { Allocation } from "../../structs/alloc.js";
import type { AllocMetric } from "../../structs/eval.js";
import { newAllocMetric } from "../../structs/eval.js";
import type { Job, TaskGroup } from "../../structs/job.js";
import { trackerForReplacement } from "../../structs/reschedule.js";
import { mergeSignals, signalsOf } from "./blocked_wait.js";
import type { DisconnectPlan } from "./disconnect_plan.js";
import type { PlanContext } from "./feasibility.js";
import type { NodeSample } from "./node_sample.js";
import { placeAlloc } from "./place.js";
import { allocName, type PlacementFailure, type Plan, type PlanOptions } from "./plan_types.js";
import type { Reconciled } from "./reconcile.js";
import type { UpdatePlan } from "./reconcile_update.js";
import type { ReschedulePlan } from "./reschedule_plan.js";

/** Everything one pass's placements read; `plan` is the one they add to. */
export interface PlacementRun {
  job: Job;
  nowNs: number;
  plan: Plan;
  ctx: PlanContext;
  nodes: NodeSample;
  /** AllocMetric.NodesAvailable of every attempt. */
  available: Record<string, number>;
  upd: UpdatePlan;
  resched: ReschedulePlan;
  disc: DisconnectPlan;
  reconciled: Reconciled;
  /** Whether the batch is full: asked before each placement (batchLimit). */
  full: () => boolean;
}

/**
 * Whether a service or batch plan only places so far (no stop, reschedule link or follow-up eval,
 * no replacement to link): only such a plan may stop early at its batch limit, because the rest of
 * a pass's records are written with its eval, in its last batch.
 */
export function placesOnly(plan: Plan, resched: ReschedulePlan, disc: DisconnectPlan): boolean {
  return (
    plan.stop.length === 0 &&
    plan.update.length === 0 &&
    plan.followups.length === 0 &&
    resched.replace.size === 0 &&
    disc.replace.size === 0
  );
}

/** PlanOptions.maxPlace as a test asked before each placement: whether a batchable plan is full. */
export function batchLimit(plan: Plan, batchable: boolean, limit: PlanOptions["maxPlace"]): () => boolean {
  return () =>
    batchable &&
    limit !== undefined &&
    (typeof limit === "number" ? plan.place.length >= limit : limit(plan.place.length));
}

/** Whether the group's allocs each claim their own volume (per_alloc): they may wait for different things. */
function perAllocGroup(g: TaskGroup): boolean {
  return Object.values(g.Volumes ?? {}).some((v) => v.PerAlloc);
}

/**
 * One more alloc of group `g` found no node: a new failure when there is no `prior`, else folded
 * into it (Nomad's CoalescedFailures). `name` is the slot's; absent for a canary. Returns the
 * group's failure (the new one, or `prior` updated).
 */
export function coalesceFailure(
  prior: PlacementFailure | undefined,
  g: TaskGroup,
  metrics: AllocMetric,
  name: string | undefined,
): PlacementFailure {
  if (!prior) {
    const f: PlacementFailure = {
      group: g.Name,
      missing: 1,
      metrics,
      names: name === undefined ? [] : [name],
      canaries: name === undefined ? 1 : 0,
    };
    if (perAllocGroup(g)) f.signals = signalsOf(metrics);
    return f;
  }
  prior.missing++;
  prior.metrics.CoalescedFailures++;
  if (name === undefined) prior.canaries++;
  else prior.names.push(name);
  if (prior.signals) mergeSignals(prior.signals, signalsOf(metrics));
  return prior;
}

/** Links a placed alloc to the failed or unknown alloc of its slot that it replaces. */
function linkReplacement(run: PlacementRun, alloc: Allocation, name: string): void {
  const prev = run.resched.replace.get(name) ?? run.disc.replace.get(name);
  if (!prev) return;
  alloc.PreviousAllocation = prev.ID;
  if (prev.ClientStatus !== "unknown") alloc.RescheduleTracker = trackerForReplacement(prev, run.nowNs);
  run.plan.update.push({ ...prev, NextAllocation: alloc.ID });
}

/** Whether slot `name` is someone's already: kept, completed, or held by a reschedule or update. */
function slotTaken(run: PlacementRun, name: string): boolean {
  const r = run.reconciled;
  return r.running.has(name) || r.completed.has(name) || run.resched.hold.has(name) || run.upd.hold.has(name);
}

/** Places group `g`'s open slots. Returns false when the batch filled (plan.more is set). */
function* placeGroup(run: PlacementRun, g: TaskGroup): Generator<void, boolean, void> {
  const { job, plan } = run;
  const deploymentId = plan.deploymentId;
  let failure: PlacementFailure | undefined;
  for (let i = 0; i < g.Count; i++) {
    const name = allocName(job, g.Name, i);
    if (slotTaken(run, name)) continue;
    if (run.full()) {
      plan.more = true;
      return false;
    }
    const metrics = newAllocMetric(run.available);
    const alloc = placeAlloc(run.ctx, run.nodes, job, g, i, run.nowNs, metrics);
    if (alloc) {
      if (deploymentId && run.upd.deployment?.TaskGroups[g.Name]) alloc.DeploymentID = deploymentId;
      linkReplacement(run, alloc, name);
      plan.place.push(alloc);
    } else failure = coalesceFailure(failure, g, metrics, name);
    yield;
  }
  if (failure) plan.failures.push(failure);
  return true;
}

/** Places the update's canaries. Returns false when the batch filled (plan.more is set). */
function* placeCanaries(run: PlacementRun): Generator<void, boolean, void> {
  const { job, plan } = run;
  const deploymentId = plan.deploymentId;
  for (const c of run.upd.canaries) {
    const g = job.TaskGroups.find((x) => x.Name === c.group);
    if (!g || !deploymentId) continue;
    if (run.full()) {
      plan.more = true;
      return false;
    }
    const metrics = newAllocMetric(run.available);
    const alloc = placeAlloc(run.ctx, run.nodes, job, g, c.index, run.nowNs, metrics);
    yield;
    if (!alloc) {
      const prior = plan.failures.find((f) => f.group === g.Name);
      const f = coalesceFailure(prior, g, metrics, undefined);
      if (!prior) plan.failures.push(f);
      continue;
    }
    alloc.DeploymentID = deploymentId;
    alloc.DeploymentStatus = {
      Healthy: null,
      Canary: true,
      Timestamp: new Date(run.nowNs / 1e6).toISOString(),
    };
    plan.place.push(alloc);
  }
  return true;
}

/** Every placement of the pass: the groups' open slots in order, then the canaries. */
export function* placeAll(run: PlacementRun): Generator<void, void, void> {
  for (const g of run.job.TaskGroups) {
    if (!(yield* placeGroup(run, g))) return;
  }
  yield* placeCanaries(run);
}
