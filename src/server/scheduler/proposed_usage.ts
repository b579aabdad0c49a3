/**
 * What a node holds as a plan sees it (Nomad's ProposedAllocs, summed): its live allocs less the
 * ones the plan stops, plus the plan's own placements on it — as resource usage for binpack and as
 * counts of the job's allocs (per group) for job anti-affinity and distinct_hosts.
 *
 * With a NodeUsageView in the plan (ctx.usage, the scheduler's index kept by deltas), a node costs
 * O(1): the view's totals, adjusted once per plan for the allocs the plan stops and then for each
 * placement as it is made; the job's counts come from the job's own allocs, read once per plan.
 * Without one (a plan made inside a transaction, `job plan`, unit tests of the reconciler), each
 * node's allocs are read once per plan (feasibility.ts proposedAllocsOnNode). Both give the same
 * numbers for the same state (the usage index's contract; test/unit/server/node_usage.test.ts).
 */
import { isAllocTerminal } from "../../structs/alloc.js";
import type { Job } from "../../structs/job.js";
import { usageOf, usageOfAllocs, type Usage } from "../../structs/resources_fit.js";
import { proposedAllocsOnNode, type PlanContext } from "./feasibility.js";

export interface ProposedNode {
  used: Usage;
  /** The job's proposed allocs on the node, and those of the group being placed. */
  ofJob: number;
  ofGroup: number;
}

const NOTHING: Usage = { cpu: 0, memoryMB: 0, cores: [] };

interface PlanUsage {
  /** Nodes whose usage differs from the view's: a private copy, adjusted. */
  adjusted: Map<string, Usage>;
  /** nodeId → group → the job's proposed allocs there. */
  counts: Map<string, Map<string, number>>;
  /** How many of ctx.planned are counted. */
  seen: number;
}

const plans = new WeakMap<PlanContext, PlanUsage>();

function addUsage(into: Usage, u: Usage, sign: 1 | -1): void {
  into.cpu += sign * u.cpu;
  into.memoryMB += sign * u.memoryMB;
  if (sign === 1) into.cores.push(...u.cores);
  else {
    for (const c of u.cores) {
      const i = into.cores.indexOf(c);
      if (i >= 0) into.cores.splice(i, 1);
    }
  }
}

function bump(counts: Map<string, Map<string, number>>, nodeId: string, group: string): void {
  let g = counts.get(nodeId);
  if (!g) {
    g = new Map();
    counts.set(nodeId, g);
  }
  g.set(group, (g.get(group) ?? 0) + 1);
}

function planUsage(ctx: PlanContext, job: Job): PlanUsage {
  let p = plans.get(ctx);
  const view = ctx.usage!;
  if (!p) {
    p = { adjusted: new Map(), counts: new Map(), seen: 0 };
    plans.set(ctx, p);
    const stopped = ctx.stopped ?? ctx.stopping;
    for (const id of stopped) {
      const c = view.contribution(id);
      if (c) addUsage(copyOf(p, view, c.nodeId), c.usage, -1);
    }
    for (const a of ctx.jobAllocs ?? ctx.state.allocsByJob(job.Namespace, job.ID)) {
      if (isAllocTerminal(a) || stopped.has(a.ID) || !a.NodeID) continue;
      bump(p.counts, a.NodeID, a.TaskGroup);
    }
  }
  for (; p.seen < ctx.planned.length; p.seen++) {
    const a = ctx.planned[p.seen]!;
    addUsage(copyOf(p, view, a.NodeID), usageOf(a.AllocatedResources), 1);
    if (a.JobID === job.ID && a.Namespace === job.Namespace) bump(p.counts, a.NodeID, a.TaskGroup);
  }
  return p;
}

function copyOf(p: PlanUsage, view: NonNullable<PlanContext["usage"]>, nodeId: string): Usage {
  let u = p.adjusted.get(nodeId);
  if (!u) {
    const base = view.node(nodeId);
    u = { cpu: base?.cpu ?? 0, memoryMB: base?.memoryMB ?? 0, cores: [...(base?.cores ?? [])] };
    p.adjusted.set(nodeId, u);
  }
  return u;
}

/** The node as the plan sees it; the answer must not be changed by the caller. */
export function proposedOnNode(ctx: PlanContext, nodeId: string, job: Job, group: string): ProposedNode {
  return proposedUsageFor(ctx, job)(nodeId, group);
}

/**
 * proposedOnNode for every node tried for one placement: the plan's adjustments are brought up to
 * date once (the plan's placements do not change while its nodes are tried).
 */
export function proposedUsageFor(
  ctx: PlanContext,
  job: Job,
): (nodeId: string, group: string) => ProposedNode {
  const view = ctx.usage;
  if (!view) return (nodeId, group) => fromAllocs(ctx, nodeId, job, group);
  const p = planUsage(ctx, job);
  return (nodeId, group) => {
    const used = p.adjusted.get(nodeId) ?? view.node(nodeId) ?? NOTHING;
    const groups = p.counts.get(nodeId);
    let ofJob = 0;
    if (groups) for (const n of groups.values()) ofJob += n;
    return { used, ofJob, ofGroup: groups?.get(group) ?? 0 };
  };
}

function fromAllocs(ctx: PlanContext, nodeId: string, job: Job, group: string): ProposedNode {
  {
    const onNode = proposedAllocsOnNode(ctx, nodeId);
    let ofJob = 0;
    let ofGroup = 0;
    for (const a of onNode) {
      if (a.JobID !== job.ID || a.Namespace !== job.Namespace) continue;
      ofJob++;
      if (a.TaskGroup === group) ofGroup++;
    }
    return { used: usageOfAllocs(onNode), ofJob, ofGroup };
  }
}
