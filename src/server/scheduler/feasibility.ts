/**
 * Node feasibility for one alloc of a task group. Pure over a StateReader plus the allocs already
 * placed or stopped by the plan being built, so the scheduler sees its own earlier decisions.
 * Each check returns a reason or null when the node fits. The reasons are the keys of an
 * AllocMetric's ConstraintFiltered, worded as Nomad's feasibility checkers word them (a
 * constraint as `LTarget Operand RTarget`, "missing drivers", "missing CSI Volume vol1", ...), so
 * an operator reads the same placement failures Nomad would show.
 */
import { allocIndex, allocTaskGroup, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { checkClaim } from "../../structs/claim.js";
import {
  ConstraintCache,
  constraintMet,
  formatConstraint,
  type Constraint,
} from "../../structs/constraint.js";
import { claimModeOf, volumeSourceForAlloc, type Job, type TaskGroup } from "../../structs/job.js";
import type { BerthError } from "../../structs/errors.js";
import { hostVolumeFits, ownEntry, type Node } from "../../structs/node.js";
import type { CSIVolume, Topology, VolumeClaim } from "../../structs/volume.js";
import { findClaim } from "../../structs/claim.js";
import type { StateReader } from "../state/store.js";
import { volumeView } from "../state/views.js";

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

/** Whether placement considers the node at all: ready, eligible, in one of the job's datacenters. */
export function nodeReady(node: Node, job: Pick<Job, "Datacenters">): boolean {
  return (
    node.Status === "ready" &&
    node.SchedulingEligibility === "eligible" &&
    typeof node.Datacenter === "string" &&
    (job.Datacenters.includes("*") || job.Datacenters.includes(node.Datacenter))
  );
}

/**
 * Nomad's readyNodesInDCs: the nodes placement tries, and how many each datacenter has
 * (AllocMetric.NodesAvailable; a datacenter the job names that has none counts 0).
 */
export function readyNodesInDCs(
  nodes: Node[],
  job: Pick<Job, "Datacenters">,
): { ready: Node[]; available: Record<string, number> } {
  const available: Record<string, number> = {};
  for (const dc of job.Datacenters) if (dc !== "*") available[dc] = 0;
  const ready = nodes.filter((n) => nodeReady(n, job));
  for (const n of ready) available[n.Datacenter] = (available[n.Datacenter] ?? 0) + 1;
  return { ready, available };
}

/** `allocId` is the ID the new alloc will carry; `index` its index in the group. */
export function nodeFeasible(
  ctx: PlanContext,
  node: Node,
  job: Job,
  group: TaskGroup,
  index: number,
  allocId: string,
): string | null {
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
  for (const req of Object.values(group.Volumes)) {
    if (req.Type !== "csi") continue;
    const reason = csiFeasible(ctx, node, job, volumeSourceForAlloc(req, index), {
      AllocationID: allocId,
      Mode: claimModeOf(req),
      AccessMode: req.AccessMode || "single-node-writer",
      AttachmentMode: req.AttachmentMode || "file-system",
    });
    if (reason) return reason;
  }
  return null;
}

function csiFeasible(
  ctx: PlanContext,
  node: Node,
  job: Job,
  volumeId: string,
  want: Pick<VolumeClaim, "AllocationID" | "Mode" | "AccessMode" | "AttachmentMode">,
): string | null {
  const vol = volumeView(ctx.state, job.Namespace, volumeId);
  if (!vol) return `missing CSI Volume ${volumeId}`;
  const plugin = ownEntry(node.CSINodePlugins, vol.PluginID);
  if (!plugin) return `CSI plugin ${vol.PluginID} is missing from client ${node.ID}`;
  if (!plugin.Healthy) return `CSI plugin ${vol.PluginID} is unhealthy on client ${node.ID}`;
  const max = plugin.NodeInfo?.MaxVolumes ?? 0;
  if (max > 0) {
    const inUse = volumesInUseOnNode(ctx, node.ID, job.Namespace, vol.PluginID);
    if (!inUse.has(volumeId) && inUse.size >= max)
      return `CSI plugin ${vol.PluginID} has the maximum number of volumes on client ${node.ID}`;
  }
  if (vol.Topologies.length > 0) {
    const nodeTopo = plugin.NodeInfo?.AccessibleTopology ?? null;
    if (!nodeTopo || !vol.Topologies.some((t) => topologyMatches(t, nodeTopo))) {
      return "did not meet topology requirement";
    }
  }
  const refusal = checkClaim(withProposedClaims(ctx, vol), {
    ...want,
    NodeID: node.ID,
    ExternalNodeID: plugin.NodeInfo?.ID ?? "",
  });
  return refusal ? claimRefusalReason(volumeId, want.Mode, refusal) : null;
}

/**
 * A claim refusal in Nomad's CSIVolumeChecker words. A capability the volume does not offer has no
 * Nomad counterpart (Nomad finds it only when claiming), so it keeps berth's own message.
 */
export function claimRefusalReason(volumeId: string, mode: "read" | "write", refusal: BerthError): string {
  if (refusal.code === "ERR_VALIDATION") return refusal.message;
  if (mode === "read")
    return `CSI volume ${volumeId} is unschedulable or has exhausted its available reader claims`;
  if (refusal.code === "ERR_CSI_VOLUME_UNSCHEDULABLE")
    return `CSI volume ${volumeId} is unschedulable or is read-only`;
  return `CSI volume ${volumeId} has exhausted its available writer claims`;
}

/**
 * A volume topology matches when every one of its segments has the same value on the node; the
 * node may carry more segments (e.g. a rack inside the volume's zone).
 */
export function topologyMatches(volume: Topology, node: Topology): boolean {
  return Object.entries(volume.Segments).every(([k, v]) => node.Segments[k] === v);
}

/** Live and planned allocs, minus those the plan stops before they ran. */
function activeAllocs(ctx: PlanContext, fromState: Allocation[]): Allocation[] {
  const live = fromState.filter((a) => !isAllocTerminal(a) && !ctx.stopping.has(a.ID));
  return [...live, ...ctx.planned];
}

/**
 * The volume as it will be once every non-terminal alloc that uses it has claimed it: allocs
 * placed but not yet claimed count as taken claims on their node, so the scheduler never places
 * two writers of a single-writer volume before either has claimed.
 */
export function withProposedClaims(ctx: PlanContext, vol: CSIVolume): CSIVolume {
  const users = activeAllocs(ctx, ctx.state.allocsByVolume(vol.Namespace, vol.ID)).filter(
    (a) => a.Namespace === vol.Namespace && usesVolume(a, vol.ID),
  );
  const WriteClaims = { ...vol.WriteClaims };
  const ReadClaims = { ...vol.ReadClaims };
  let accessMode = vol.AccessMode;
  let attachmentMode = vol.AttachmentMode;
  for (const a of users) {
    if (findClaim(vol, a.ID)) continue;
    const req = requestFor(a, vol.ID);
    if (!req) continue;
    const claim: VolumeClaim = {
      AllocationID: a.ID,
      NodeID: a.NodeID,
      ExternalNodeID: "",
      Mode: claimModeOf(req),
      AccessMode: req.AccessMode || "single-node-writer",
      AttachmentMode: req.AttachmentMode || "file-system",
      State: "taken",
    };
    if (claim.Mode === "write") WriteClaims[a.ID] = claim;
    else ReadClaims[a.ID] = claim;
    if (accessMode === "") {
      accessMode = claim.AccessMode;
      attachmentMode = claim.AttachmentMode;
    }
  }
  return { ...vol, ReadClaims, WriteClaims, AccessMode: accessMode, AttachmentMode: attachmentMode };
}

function requestFor(a: Allocation, volumeId: string) {
  const group = allocTaskGroup(a);
  return Object.values(group?.Volumes ?? {}).find(
    (r) => r.Type === "csi" && volumeSourceForAlloc(r, allocIndex(a)) === volumeId,
  );
}

function usesVolume(a: Allocation, volumeId: string): boolean {
  return requestFor(a, volumeId) !== undefined;
}

/** IDs of the plugin's volumes that live or planned allocs on the node use. */
function volumesInUseOnNode(
  ctx: PlanContext,
  nodeId: string,
  namespace: string,
  pluginId: string,
): Set<string> {
  const out = new Set<string>();
  const pluginOf = new Map<string, string | undefined>();
  const allocs = activeAllocs(ctx, ctx.state.allocsByNode(nodeId)).filter((a) => a.NodeID === nodeId);
  for (const a of allocs) {
    const group = allocTaskGroup(a);
    for (const r of Object.values(group?.Volumes ?? {})) {
      if (r.Type !== "csi") continue;
      const id = volumeSourceForAlloc(r, allocIndex(a));
      const key = `${a.Namespace}/${id}`;
      if (!pluginOf.has(key)) pluginOf.set(key, ctx.state.getVolume(a.Namespace, id)?.PluginID);
      if (pluginOf.get(key) === pluginId) out.add(a.Namespace === namespace ? id : key);
    }
  }
  return out;
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
