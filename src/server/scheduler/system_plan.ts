/**
 * The reconciler for system and sysbatch jobs (Nomad's SystemScheduler): the slots system_slots.ts
 * chooses, each placed on its own node with the same feasibility and fit checks a service alloc
 * gets (rank.ts over a one-node sample). Pure over a StateReader, in steps like plan.ts planSteps.
 *
 * Placement failures as Nomad's system scheduler reports them: a node the group cannot run on
 * (a constraint, a missing driver or CSI plugin, a volume) is not a failure — the job simply does
 * not run there — unless no node at all took the group and none runs it already, when the merged
 * filter counts are the group's failure. A feasible node without room (CPU, memory, cores) is a
 * failure, coalesced per group, and leaves the job blocked until capacity may have appeared.
 */
import type { Allocation } from "../../structs/alloc.js";
import { newAllocMetric, type AllocMetric } from "../../structs/eval.js";
import type { Job } from "../../structs/job.js";
import type { StateReader } from "../state/store.js";
import { planContextOf, readyNodesInDCs } from "./feasibility.js";
import { NodeSample } from "./node_sample.js";
import { placeAlloc } from "./place.js";
import { batchLimit } from "./place_steps.js";
import { followupsFor } from "./reschedule_plan.js";
import type { PlacementFailure, Plan, PlanOptions } from "./plan_types.js";
import { systemDiff } from "./system_slots.js";

/** Nomad's mergeNodeFiltered: the filter counts of several one-node tries added up. */
function mergeFiltered(acc: AllocMetric | undefined, cur: AllocMetric): AllocMetric {
  if (!acc)
    return {
      ...cur,
      ClassFiltered: { ...cur.ClassFiltered },
      ConstraintFiltered: { ...cur.ConstraintFiltered },
    };
  acc.NodesEvaluated += cur.NodesEvaluated;
  acc.NodesFiltered += cur.NodesFiltered;
  for (const [k, v] of Object.entries(cur.ClassFiltered))
    acc.ClassFiltered[k] = (acc.ClassFiltered[k] ?? 0) + v;
  for (const [k, v] of Object.entries(cur.ConstraintFiltered))
    acc.ConstraintFiltered[k] = (acc.ConstraintFiltered[k] ?? 0) + v;
  return acc;
}

/** The placement failures of a system pass, per group, as Nomad's system scheduler counts them. */
class SystemFailures {
  /** Feasible nodes without room: failures, coalesced per group. */
  private readonly failures = new Map<string, PlacementFailure>();
  /** Slots whose node the group cannot run on: merged filter counts per group. */
  private readonly filtered = new Map<string, { metrics: AllocMetric; slots: number }>();
  /** Slots tried per group. */
  private readonly tried = new Map<string, number>();

  tried1(group: string): void {
    this.tried.set(group, (this.tried.get(group) ?? 0) + 1);
  }

  /** Slot `name` of `group` found no node; `metrics` says whether its node was filtered out. */
  add(group: string, name: string, metrics: AllocMetric): void {
    if (metrics.NodesFiltered > 0) {
      const f = this.filtered.get(group);
      this.filtered.set(group, { metrics: mergeFiltered(f?.metrics, metrics), slots: (f?.slots ?? 0) + 1 });
      return;
    }
    const f = this.failures.get(group);
    if (!f) this.failures.set(group, { group, missing: 1, names: [name], canaries: 0, metrics });
    else {
      f.missing++;
      f.metrics.CoalescedFailures++;
      f.names.push(name);
    }
  }

  /**
   * The group failures. A group every slot of which was on a node it cannot run on, and that runs
   * nowhere (`runningGroups`), fails too (Nomad: queued allocs down to 0 and no existing alloc).
   */
  result(runningGroups: ReadonlySet<string>): PlacementFailure[] {
    for (const [g, f] of this.filtered) {
      if (f.slots < (this.tried.get(g) ?? 0) || runningGroups.has(g) || this.failures.has(g)) continue;
      this.failures.set(g, { group: g, missing: f.slots, names: [], canaries: 0, metrics: f.metrics });
    }
    return [...this.failures.values()];
  }
}

/**
 * `existing`: the job's allocs of its current incarnation; `plan`: the plan so far (the stops of an
 * earlier incarnation), which this fills in and returns; `runningEvalId`: the delayed eval this pass
 * runs ("" for any other), whose failed slots are placed now.
 */
export function* systemPlanSteps(
  state: StateReader,
  job: Job,
  existing: readonly Allocation[],
  plan: Plan,
  nowNs: number,
  runningEvalId: string,
  opts: PlanOptions = {},
): Generator<void, Plan, void> {
  const nodes = opts.listNodes?.() ?? state.listNodes();
  const diff = systemDiff(job, existing, nodes, { nowNs, runningEvalId });
  plan.stop.push(...diff.stop);
  if (job.Stop) return plan;
  const retries = followupsFor(state, diff.later);
  plan.followups.push(...retries.followups);
  plan.update.push(...retries.update);
  // The job's allocs and the nodes were read: let the caller yield before placing.
  yield;
  const ctx = planContextOf(state, plan.place, plan.stop, existing, opts.usage);
  const { available } = readyNodesInDCs(nodes, job);
  // Only a plan that places and nothing else may stop early (place_steps.ts says why): no stop,
  // and no ended alloc to link to its successor.
  const batchable =
    plan.stop.length === 0 && plan.followups.length === 0 && diff.place.every((x) => x.previous === null);
  const full = batchLimit(plan, batchable, opts.maxPlace);
  const failures = new SystemFailures();
  for (const slot of diff.place) {
    if (full()) {
      plan.more = true;
      return plan;
    }
    failures.tried1(slot.group.Name);
    const metrics = newAllocMetric(available);
    const alloc = placeAlloc(
      ctx,
      new NodeSample([slot.node], ""),
      job,
      slot.group,
      slot.index,
      nowNs,
      metrics,
    );
    if (!alloc) failures.add(slot.group.Name, slot.name, metrics);
    else {
      const prev = slot.previous;
      if (prev) alloc.PreviousAllocation = prev.ID;
      // An ended alloc learns its successor, as a rescheduled one does; one this plan stops keeps
      // its stop record (it is written once).
      if (prev && !ctx.stopped.has(prev.ID)) plan.update.push({ ...prev, NextAllocation: alloc.ID });
      plan.place.push(alloc);
    }
    yield;
  }
  plan.failures.push(...failures.result(new Set(diff.keep.map((a) => a.TaskGroup))));
  return plan;
}
