/**
 * Node feasibility for one alloc of a task group. Pure over a StateReader plus the allocs already
 * placed or stopped by the plan being built, so the scheduler sees its own earlier decisions.
 * Each check returns a reason or null when the node fits. The reasons are the keys of an
 * AllocMetric's ConstraintFiltered, worded as Nomad's feasibility checkers word them (a
 * constraint as `LTarget Operand RTarget`, "missing drivers", "missing CSI Volume vol1", ...), so
 * an operator reads the same placement failures Nomad would show.
 */
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import {
  ConstraintCache,
  constraintMet,
  formatConstraint,
  type Constraint,
} from "../../structs/constraint.js";
import {
  claimModeOf,
  volumeSourceForAlloc,
  type Job,
  type TaskGroup,
  type VolumeCreateSpec,
  type VolumeRequest,
} from "../../structs/job.js";
import { inAnyDatacenter } from "../../structs/datacenter.js";
import { hostVolumeFits, ownEntry, type Node } from "../../structs/node.js";
import type { StateReader } from "../state/store.js";
import { csiFeasible } from "./csi_feasibility.js";
import { newVolumeFeasible } from "./new_volume_feasible.js";
import type { NodeUsageView } from "./node_usage.js";

export interface PlanContext {
  state: StateReader;
  /** Allocs this plan places (not yet in state). */
  planned: Allocation[];
  /** IDs of allocs this plan stops before they ran: they will hold no claim. */
  stopping: ReadonlySet<string>;
  /**
   * IDs of every alloc this plan stops (Nomad's plan NodeUpdate): their CPU and memory are free
   * for the plan's placements, and they no longer count for distinct_* and spread. Absent: the
   * pending ones of `stopping` only.
   */
  stopped?: ReadonlySet<string>;
  /**
   * The scheduler's per-node usage index at exactly `state`'s index (node_usage.ts), when the plan
   * has one: node usage and volumes in use are read from it instead of each node's allocs.
   */
  usage?: NodeUsageView;
  /** Every alloc of the job (any incarnation) as the plan read them, so they are read once. */
  jobAllocs?: readonly Allocation[];
}

/**
 * The context of a pass's placements: `planned` grows as it places; `stops` are the allocs it
 * stops (the pending ones hold no claim); `usage` is taken only when it is at `state`'s index.
 */
export function planContextOf(
  state: StateReader,
  planned: Allocation[],
  stops: readonly { alloc: Allocation }[],
  jobAllocs: readonly Allocation[],
  usage: NodeUsageView | undefined,
): PlanContext & { stopped: ReadonlySet<string> } {
  return {
    state,
    planned,
    stopping: new Set(stops.filter((s) => s.alloc.ClientStatus === "pending").map((s) => s.alloc.ID)),
    stopped: new Set(stops.map((s) => s.alloc.ID)),
    usage: usage && usage.index === state.index() ? usage : undefined,
    jobAllocs,
  };
}

const caches = new WeakMap<PlanContext, ConstraintCache>();

/** The plan's parsed regexps and version constraints: each right-hand side parsed once per plan. */
export function constraintCache(ctx: PlanContext): ConstraintCache {
  let c = caches.get(ctx);
  if (!c) {
    c = new ConstraintCache();
    caches.set(ctx, c);
  }
  return c;
}

const groupConstraintLists = new WeakMap<TaskGroup, Constraint[]>();

/** The group's and its tasks' constraints (Nomad's task group constraint checker takes both). */
function groupConstraints(group: TaskGroup): Constraint[] {
  let list = groupConstraintLists.get(group);
  if (!list) {
    list = [...(group.Constraints ?? []), ...group.Tasks.flatMap((t) => t.Constraints ?? [])];
    groupConstraintLists.set(group, list);
  }
  return list;
}

function firstUnmet(ctx: PlanContext, constraints: Constraint[], node: Node): string | null {
  if (constraints.length === 0) return null;
  const cache = constraintCache(ctx);
  const unmet = constraints.find((c) => !constraintMet(c, node, cache));
  return unmet ? formatConstraint(unmet) : null;
}

/**
 * Whether placement considers the node at all: ready, eligible, in one of the job's datacenters
 * (Nomad's glob patterns: `*`, `dc*`).
 */
export function nodeReady(node: Node, job: Pick<Job, "Datacenters">): boolean {
  return (
    node.Status === "ready" &&
    node.SchedulingEligibility === "eligible" &&
    typeof node.Datacenter === "string" &&
    inAnyDatacenter(job.Datacenters, node.Datacenter)
  );
}

/**
 * Nomad's readyNodesInDCs: the nodes placement tries, and how many each datacenter has
 * (AllocMetric.NodesAvailable; a datacenter the job names literally, without a `*`, that has none
 * counts 0).
 */
export function readyNodesInDCs(
  nodes: Node[],
  job: Pick<Job, "Datacenters">,
): { ready: Node[]; available: Record<string, number> } {
  const available: Record<string, number> = {};
  for (const dc of job.Datacenters) if (!dc.includes("*")) available[dc] = 0;
  const ready = nodes.filter((n) => nodeReady(n, job));
  for (const n of ready) available[n.Datacenter] = (available[n.Datacenter] ?? 0) + 1;
  return { ready, available };
}

/**
 * The checks that depend only on the node and the group (everything but CSI), remembered per plan,
 * group and node: a node record does not change during a plan, so a pass over many allocs of a
 * group checks each node's constraints, drivers and host volumes once (Nomad's computed node class
 * eligibility, without the classes).
 */
const staticReasons = new WeakMap<PlanContext, WeakMap<TaskGroup, Map<string, string | null>>>();

/** `allocId` is the ID the new alloc will carry; `index` its index in the group. */
export function nodeFeasible(
  ctx: PlanContext,
  node: Node,
  job: Job,
  group: TaskGroup,
  index: number,
  allocId: string,
): string | null {
  return feasibilityFor(ctx, job, group, index, allocId)(node);
}

/**
 * nodeFeasible for one alloc, prepared once for every node tried: the group's remembered static
 * answers and the alloc's CSI claim requests are looked up once, not per node.
 */
export function feasibilityFor(
  ctx: PlanContext,
  job: Job,
  group: TaskGroup,
  index: number,
  allocId: string,
): (node: Node) => string | null {
  let byGroup = staticReasons.get(ctx);
  if (!byGroup) {
    byGroup = new WeakMap();
    staticReasons.set(ctx, byGroup);
  }
  let byNode = byGroup.get(group);
  if (!byNode) {
    byNode = new Map();
    byGroup.set(group, byNode);
  }
  const reasons = byNode;
  const wants = csiRequestsOf(group).map((req) => ({
    volumeId: volumeSourceForAlloc(req, index),
    // A volume the job creates on first placement and that does not exist yet: the node must fit
    // a new volume (new_volume_feasible.ts), read once per alloc (state is fixed in a plan).
    create: toBeCreated(ctx, job, req, index),
    want: {
      AllocationID: allocId,
      Mode: claimModeOf(req),
      AccessMode: req.AccessMode || "single-node-writer",
      AttachmentMode: req.AttachmentMode || "file-system",
    },
  }));
  return (node) => {
    let reason = reasons.get(node.ID);
    if (reason === undefined) {
      reason = staticReason(ctx, node, job, group);
      reasons.set(node.ID, reason);
    }
    if (reason) return reason;
    for (const w of wants) {
      const refusal = w.create
        ? newVolumeFeasible(ctx, node, job, w.create, w.volumeId, w.want)
        : csiFeasible(ctx, node, job, w.volumeId, w.want);
      if (refusal) return refusal;
    }
    return null;
  };
}

function toBeCreated(
  ctx: PlanContext,
  job: Job,
  req: VolumeRequest,
  index: number,
): (VolumeRequest & { Create: VolumeCreateSpec }) | undefined {
  if (!req.Create) return undefined;
  return ctx.state.getVolume(job.Namespace, volumeSourceForAlloc(req, index))
    ? undefined
    : { ...req, Create: req.Create };
}

const csiRequestLists = new WeakMap<TaskGroup, VolumeRequest[]>();

function csiRequestsOf(group: TaskGroup): VolumeRequest[] {
  let list = csiRequestLists.get(group);
  if (!list) {
    list = Object.values(group.Volumes).filter((r) => r.Type === "csi");
    csiRequestLists.set(group, list);
  }
  return list;
}

function staticReason(ctx: PlanContext, node: Node, job: Job, group: TaskGroup): string | null {
  // Placement only tries ready nodes (readyNodesInDCs); kept so any caller gets a whole answer.
  if (!nodeReady(node, job)) return "node is not ready, eligible and in the job's datacenters";
  // Nomad's order: the job's constraints, then the group's drivers, then the group's and its tasks'
  // constraints, so a node refused on two counts shows the reason Nomad would show.
  const jobUnmet = firstUnmet(ctx, job.Constraints ?? [], node);
  if (jobUnmet) return jobUnmet;
  for (const task of group.Tasks) {
    // Nomad's DriverChecker: an undetected and an unhealthy driver are both missing, and so is
    // every driver of a record without a Drivers map (validated on the way in since; an old record
    // is simply infeasible, never a TypeError that fails placement for every job).
    const d = ownEntry(node.Drivers, task.Driver);
    if (!d?.Detected || !d.Healthy) return "missing drivers";
  }
  const groupUnmet = firstUnmet(ctx, groupConstraints(group), node);
  if (groupUnmet) return groupUnmet;
  for (const task of group.Tasks) {
    if (task.VolumeMounts.length > 0 && !ownEntry(node.Drivers, task.Driver)!.SupportsMounts)
      return `driver ${task.Driver} does not support volume mounts`;
  }
  // Nomad's HostVolumeChecker: every host volume the group asks for, writable unless read-only.
  const hostVolumes = Object.values(group.Volumes).filter((r) => r.Type === "host");
  if (!hostVolumes.every((r) => hostVolumeFits(node, r.Source, r.ReadOnly)))
    return "missing compatible host volumes";
  return null;
}

/**
 * Per plan: each node's proposed allocs, read from state (less those the plan stops) on first use
 * and extended with the plan's placements as they are added (ctx.planned only grows; state does not
 * change during a plan).
 */
interface NodeAllocIndex {
  byNode: Map<string, Allocation[]>;
  /** How many of ctx.planned are indexed. */
  seen: number;
}

const nodeIndexes = new WeakMap<PlanContext, NodeAllocIndex>();

function liveOnNode(ctx: PlanContext, nodeId: string): Allocation[] {
  const stopped = ctx.stopped ?? ctx.stopping;
  return ctx.state
    .allocsByNode(nodeId)
    .filter((a) => a.NodeID === nodeId && !isAllocTerminal(a) && !stopped.has(a.ID));
}

/**
 * Nomad's ProposedAllocs for a node: its live allocs (any job) less those the plan stops, plus the
 * plan's placements on it. O(allocs on the node) once per plan, then O(1); the caller must not
 * change the answer.
 */
export function proposedAllocsOnNode(ctx: PlanContext, nodeId: string): readonly Allocation[] {
  let idx = nodeIndexes.get(ctx);
  if (!idx) {
    idx = { byNode: new Map(), seen: 0 };
    nodeIndexes.set(ctx, idx);
  }
  const listOf = (id: string) => {
    let list = idx.byNode.get(id);
    if (!list) {
      list = liveOnNode(ctx, id);
      idx.byNode.set(id, list);
    }
    return list;
  };
  for (; idx.seen < ctx.planned.length; idx.seen++) {
    const a = ctx.planned[idx.seen]!;
    listOf(a.NodeID).push(a);
  }
  return listOf(nodeId);
}
