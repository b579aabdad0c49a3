/**
 * The reconciler for service and batch jobs: compares a job's wanted allocs (Count per group,
 * named `<job>.<group>[<index>]`) with the ones it has and decides what to place and what to stop.
 * Pure over a StateReader; the Scheduler applies the plan in the same write transaction.
 */
import { isAllocTerminal, isClientTerminal, type Allocation } from "../../structs/alloc.js";
import { newUuid } from "../../structs/ids.js";
import type { Job, JobStatus, TaskGroup } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import type { StateReader } from "../state/store.js";
import { nodeFeasible, type PlanContext } from "./feasibility.js";

export interface PlacementFailure {
  group: string;
  /** Allocs of the group that found no node. */
  missing: number;
  /** Why nodes were refused, by reason, counted over every node tried. */
  reasons: Record<string, number>;
}

export interface Plan {
  place: Allocation[];
  stop: { alloc: Allocation; description: string }[];
  failures: PlacementFailure[];
}

export function allocName(job: Pick<Job, "ID">, group: string, index: number): string {
  return `${job.ID}.${group}[${index}]`;
}

/** `job` is the stored record (with its indexes): new allocs snapshot it. `nowNs` stamps them. */
export function computePlan(state: StateReader, job: Job, nowNs: number): Plan {
  const existing = state.allocsByJob(job.Namespace, job.ID);
  const plan: Plan = { place: [], stop: [], failures: [] };
  const wanted = new Set<string>();
  if (!job.Stop) {
    for (const g of job.TaskGroups) {
      for (let i = 0; i < g.Count; i++) wanted.add(allocName(job, g.Name, i));
    }
  }
  const runningByName = new Map<string, Allocation>();
  for (const a of existing) {
    if (a.DesiredStatus !== "run") continue;
    if (isClientTerminal(a.ClientStatus)) continue;
    if (!wanted.has(a.Name)) {
      plan.stop.push({
        alloc: a,
        description: job.Stop ? "alloc not needed as job is stopped" : "alloc not needed due to job update",
      });
    } else if (a.Job.Version !== job.Version) {
      plan.stop.push({ alloc: a, description: "alloc is being updated due to job update" });
    } else {
      runningByName.set(a.Name, a);
    }
  }
  if (job.Stop) return plan;
  const completed = new Set(
    job.Type === "batch"
      ? existing
          .filter((a) => a.ClientStatus === "complete" && a.Job.Version === job.Version)
          .map((a) => a.Name)
      : [],
  );
  const ctx: PlanContext = {
    state,
    planned: plan.place,
    stopping: new Set(plan.stop.filter((s) => s.alloc.ClientStatus === "pending").map((s) => s.alloc.ID)),
  };
  const nodes = state.listNodes();
  const perNode = new Map<string, number>();
  for (const a of existing) {
    if (!isAllocTerminal(a) && !ctx.stopping.has(a.ID))
      perNode.set(a.NodeID, (perNode.get(a.NodeID) ?? 0) + 1);
  }
  for (const g of job.TaskGroups) {
    const failure: PlacementFailure = { group: g.Name, missing: 0, reasons: {} };
    for (let i = 0; i < g.Count; i++) {
      const name = allocName(job, g.Name, i);
      if (runningByName.has(name) || completed.has(name)) continue;
      const alloc = place(ctx, nodes, perNode, job, g, i, nowNs, failure.reasons);
      if (alloc) plan.place.push(alloc);
      else failure.missing++;
    }
    if (failure.missing > 0) plan.failures.push(failure);
  }
  return plan;
}

/** Picks the feasible node with the fewest of this job's allocs (spread), ties by node ID. */
function place(
  ctx: PlanContext,
  nodes: Node[],
  perNode: Map<string, number>,
  job: Job,
  group: TaskGroup,
  index: number,
  nowNs: number,
  reasons: Record<string, number>,
): Allocation | null {
  const id = newUuid();
  let best: Node | undefined;
  for (const n of nodes) {
    const reason = nodeFeasible(ctx, n, job, group, index, id);
    if (reason) {
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      continue;
    }
    if (!best || (perNode.get(n.ID) ?? 0) < (perNode.get(best.ID) ?? 0)) best = n;
  }
  if (!best) return null;
  perNode.set(best.ID, (perNode.get(best.ID) ?? 0) + 1);
  return {
    ID: id,
    Namespace: job.Namespace,
    Name: allocName(job, group.Name, index),
    NodeID: best.ID,
    NodeName: best.Name,
    JobID: job.ID,
    Job: job,
    TaskGroup: group.Name,
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: nowNs,
    ModifyTime: nowNs,
  };
}

/**
 * Nomad's job status: running while any alloc is non-terminal, dead once stopped (or a batch job
 * finished) with every alloc terminal, pending otherwise (nothing placed yet).
 */
export function jobStatus(job: Job, allocs: Allocation[]): JobStatus {
  if (allocs.some((a) => !isAllocTerminal(a))) return "running";
  if (job.Stop) return "dead";
  if (job.Type === "batch" && allocs.length > 0 && allocs.some((a) => a.ClientStatus === "complete")) {
    const done = new Set(allocs.filter((a) => a.ClientStatus === "complete").map((a) => a.Name));
    const wanted = job.TaskGroups.reduce((n, g) => n + g.Count, 0);
    if (done.size >= wanted) return "dead";
  }
  return "pending";
}
