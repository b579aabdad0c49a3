/**
 * The CSI part of node feasibility (Nomad's CSIVolumeChecker): the node runs a healthy node plugin
 * for the volume's plugin, has room under its max volumes, matches the volume's topology, and the
 * volume can take the claim once every placed-but-unclaimed alloc of the plan and of state has
 * claimed it. Everything a node check reads is built once per plan and volume (or node) and then
 * extended with the plan's new placements only: checking a node is O(1) in the cluster's size, so
 * a CSI placement pass costs O(nodes) per alloc, not nodes × (volume + plugin record + claims).
 */
import { allocIndex, allocTaskGroup, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { checkClaim, findClaim } from "../../structs/claim.js";
import type { BerthError } from "../../structs/errors.js";
import { claimModeOf, volumeSourceForAlloc, type Job } from "../../structs/job.js";
import { ownEntry, type Node } from "../../structs/node.js";
import type { CSIVolume, Topology, VolumeClaim } from "../../structs/volume.js";
import type { StateReader } from "../state/store.js";
import { volumeView, type PluginSummaries } from "../state/views.js";
import { volumeKey, type NodeUsageView } from "./node_usage.js";

/** What the CSI checks read of a plan (feasibility.ts's PlanContext). */
export interface CsiPlanContext {
  state: StateReader;
  /** Allocs this plan places (not yet in state); only grows during a plan. */
  planned: Allocation[];
  /** IDs of allocs this plan stops before they ran: they will hold no claim. */
  stopping: ReadonlySet<string>;
  /** The scheduler's usage index at `state`'s index (node_usage.ts), when the plan has one. */
  usage?: NodeUsageView;
}

export function csiFeasible(
  ctx: CsiPlanContext,
  node: Node,
  job: Job,
  volumeId: string,
  want: Pick<VolumeClaim, "AllocationID" | "Mode" | "AccessMode" | "AttachmentMode">,
): string | null {
  const vol = proposedVolume(ctx, job.Namespace, volumeId);
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
  const refusal = claimCheck(vol, want, node.ID, plugin.NodeInfo?.ID ?? "");
  return refusal ? claimRefusalReason(volumeId, want.Mode, refusal) : null;
}

/** The last claim check of a volume view that no claim occupies, and the request it answered. */
const unclaimedChecks = new WeakMap<CSIVolume, { want: ClaimWant; refusal: BerthError | null }>();

type ClaimWant = Pick<VolumeClaim, "AllocationID" | "Mode" | "AccessMode" | "AttachmentMode">;

/**
 * checkClaim for the node. A volume with no claim at all gives the same answer on every node (the
 * node only matters next to other claims: structs/claim.ts), so that answer is computed once per
 * volume view and request, not once per node tried.
 */
function claimCheck(
  vol: CSIVolume,
  want: ClaimWant,
  nodeId: string,
  externalNodeId: string,
): BerthError | null {
  const memo = unclaimedChecks.get(vol);
  if (
    memo &&
    memo.want.AllocationID === want.AllocationID &&
    memo.want.Mode === want.Mode &&
    memo.want.AccessMode === want.AccessMode &&
    memo.want.AttachmentMode === want.AttachmentMode
  )
    return memo.refusal;
  const refusal = checkClaim(vol, { ...want, NodeID: nodeId, ExternalNodeID: externalNodeId });
  const unclaimed = isEmpty(vol.ReadClaims) && isEmpty(vol.WriteClaims) && isEmpty(vol.PastClaims);
  if (unclaimed) unclaimedChecks.set(vol, { want, refusal });
  return refusal;
}

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
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

/**
 * The volume as it will be once every non-terminal alloc that uses it has claimed it: allocs
 * placed but not yet claimed count as taken claims on their node, so the scheduler never places
 * two writers of a single-writer volume before either has claimed. The plan's own placements are
 * found through the per-plan index (plannedUsers), not by scanning the plan.
 */
function withProposedClaims(ctx: CsiPlanContext, vol: CSIVolume): CSIVolume {
  const live = ctx.state
    .allocsByVolume(vol.Namespace, vol.ID)
    .filter((a) => !isAllocTerminal(a) && !ctx.stopping.has(a.ID));
  return proposeClaims(vol, [...live, ...plannedUsers(ctx, vol.Namespace, vol.ID, 0)]);
}

/** A placement of the plan, and its place in ctx.planned. */
interface PlannedEntry {
  alloc: Allocation;
  at: number;
}

/** Per plan: the planned allocs by the volumes they use and by node, and how many are taken in. */
const plannedIndexes = new WeakMap<
  CsiPlanContext,
  { byVolume: Map<string, PlannedEntry[]>; byNode: Map<string, PlannedEntry[]>; seen: number }
>();

/**
 * The plan's placements from position `from` on, by volume or by node. The index takes in each new
 * placement once (ctx.planned only grows), so a per_alloc job of n allocs costs O(n) here, not
 * O(n²) as a scan of the plan for every new volume (and every node tried) did.
 */
function plannedIndex(ctx: CsiPlanContext) {
  let idx = plannedIndexes.get(ctx);
  if (!idx) {
    idx = { byVolume: new Map(), byNode: new Map(), seen: 0 };
    plannedIndexes.set(ctx, idx);
  }
  for (; idx.seen < ctx.planned.length; idx.seen++) {
    const a = ctx.planned[idx.seen]!;
    const entry = { alloc: a, at: idx.seen };
    pushTo(idx.byNode, a.NodeID, entry);
    for (const r of Object.values(allocTaskGroup(a)?.Volumes ?? {})) {
      if (r.Type !== "csi") continue;
      pushTo(idx.byVolume, volumeKey(a.Namespace, volumeSourceForAlloc(r, allocIndex(a))), entry);
    }
  }
  return idx;
}

function pushTo(m: Map<string, PlannedEntry[]>, key: string, e: PlannedEntry): void {
  const list = m.get(key);
  if (list) list.push(e);
  else m.set(key, [e]);
}

function since(entries: PlannedEntry[] | undefined, from: number): Allocation[] {
  const out: Allocation[] = [];
  for (const e of entries ?? []) if (e.at >= from) out.push(e.alloc);
  return out;
}

function plannedUsers(ctx: CsiPlanContext, namespace: string, volumeId: string, from: number): Allocation[] {
  return since(plannedIndex(ctx).byVolume.get(volumeKey(namespace, volumeId)), from);
}

function plannedOnNode(ctx: CsiPlanContext, nodeId: string, from: number): Allocation[] {
  return since(plannedIndex(ctx).byNode.get(nodeId), from);
}

/** `vol` with a taken claim for each of `allocs` that uses it and holds none yet. */
function proposeClaims(vol: CSIVolume, allocs: readonly Allocation[]): CSIVolume {
  const users = allocs.filter((a) => a.Namespace === vol.Namespace && usesVolume(a, vol.ID));
  if (users.length === 0) return vol;
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

/** A volume's proposed view (withProposedClaims) and how many of ctx.planned it has taken in. */
interface ProposedView {
  vol: CSIVolume | undefined;
  seen: number;
}

const proposedViews = new WeakMap<CsiPlanContext, Map<string, ProposedView>>();

/**
 * withProposedClaims of the volume, denormalised from its plugin's summary, once per plan and
 * volume, then extended with the plan's new placements only (ctx.planned only grows; state does
 * not change during a plan): every node tried for every alloc reads it in O(1), so a CSI placement
 * pass is no longer nodes × (volume read + plugin read + claim scan) per alloc.
 */
function proposedVolume(ctx: CsiPlanContext, namespace: string, volumeId: string): CSIVolume | undefined {
  // Every node tried for one alloc asks for the same volume in a row: answer it from the last.
  const last = lastViews.get(ctx);
  if (last && last.seen === ctx.planned.length && last.id === volumeId && last.namespace === namespace)
    return last.vol;
  const vol = proposedVolumeOf(ctx, namespace, volumeId);
  lastViews.set(ctx, { namespace, id: volumeId, seen: ctx.planned.length, vol });
  return vol;
}

const lastViews = new WeakMap<
  CsiPlanContext,
  { namespace: string; id: string; seen: number; vol: CSIVolume | undefined }
>();

function proposedVolumeOf(ctx: CsiPlanContext, namespace: string, volumeId: string): CSIVolume | undefined {
  let views = proposedViews.get(ctx);
  if (!views) {
    views = new Map();
    proposedViews.set(ctx, views);
  }
  const key = volumeKey(namespace, volumeId);
  let view = views.get(key);
  if (!view) {
    const vol = volumeViewInPlan(ctx, namespace, volumeId);
    view = { vol: vol && withProposedClaims(ctx, vol), seen: ctx.planned.length };
    views.set(key, view);
  } else if (view.seen < ctx.planned.length) {
    if (view.vol) view.vol = proposeClaims(view.vol, plannedUsers(ctx, namespace, volumeId, view.seen));
    view.seen = ctx.planned.length;
  }
  return view.vol;
}

/** Per plan: each plugin's summary, read once (a per_alloc job reads a new volume per alloc). */
const planSummaries = new WeakMap<CsiPlanContext, PluginSummaries>();

/** volumeView, with the plugin summary read once per plan and plugin (state is fixed in a plan). */
function volumeViewInPlan(ctx: CsiPlanContext, namespace: string, volumeId: string): CSIVolume | undefined {
  let seen = planSummaries.get(ctx);
  if (!seen) {
    seen = new Map();
    planSummaries.set(ctx, seen);
  }
  return volumeView(ctx.state, namespace, volumeId, seen);
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

/** One CSI volume a live or planned alloc on a node uses. */
interface NodeVolume {
  namespace: string;
  id: string;
  pluginId: string | undefined;
}

/** Per plan and node: the volumes its live and planned allocs use, and how many of ctx.planned are in. */
const nodeVolumeIndexes = new WeakMap<CsiPlanContext, Map<string, { volumes: NodeVolume[]; seen: number }>>();
/** Per plan: each volume's plugin, read once. */
const volumePlugins = new WeakMap<CsiPlanContext, Map<string, string | undefined>>();

/** The CSI volumes `allocs` use, each with its plugin (read once per plan and volume). */
function volumesOf(ctx: CsiPlanContext, allocs: readonly Allocation[]): NodeVolume[] {
  let plugins = volumePlugins.get(ctx);
  if (!plugins) {
    plugins = new Map();
    volumePlugins.set(ctx, plugins);
  }
  const out: NodeVolume[] = [];
  for (const a of allocs) {
    const group = allocTaskGroup(a);
    for (const r of Object.values(group?.Volumes ?? {})) {
      if (r.Type !== "csi") continue;
      out.push(nodeVolume(ctx, plugins, a.Namespace, volumeSourceForAlloc(r, allocIndex(a))));
    }
  }
  return out;
}

function nodeVolume(
  ctx: CsiPlanContext,
  plugins: Map<string, string | undefined>,
  namespace: string,
  id: string,
): NodeVolume {
  const key = volumeKey(namespace, id);
  if (!plugins.has(key)) plugins.set(key, ctx.state.getVolume(namespace, id)?.PluginID);
  return { namespace, id, pluginId: plugins.get(key) };
}

/**
 * The volumes the node's live allocs use, less those of allocs the plan stops before they ran,
 * from the usage index (no read of the node's allocs).
 */
function liveVolumesFromIndex(ctx: CsiPlanContext, view: NodeUsageView, nodeId: string): NodeVolume[] {
  const counts = new Map(view.node(nodeId)?.volumes ?? []);
  for (const id of ctx.stopping) {
    const c = view.contribution(id);
    if (c?.nodeId !== nodeId) continue;
    for (const v of c.volumes) counts.set(v, (counts.get(v) ?? 0) - 1);
  }
  let plugins = volumePlugins.get(ctx);
  if (!plugins) {
    plugins = new Map();
    volumePlugins.set(ctx, plugins);
  }
  const out: NodeVolume[] = [];
  for (const [key, n] of counts) {
    if (n <= 0) continue;
    const sep = key.indexOf("\u0000");
    out.push(nodeVolume(ctx, plugins, key.slice(0, sep), key.slice(sep + 1)));
  }
  return out;
}

/**
 * IDs of the plugin's volumes that live or planned allocs on the node use: the node's live allocs
 * read once per plan, the plan's placements added as they come.
 */
export function volumesInUseOnNode(
  ctx: CsiPlanContext,
  nodeId: string,
  namespace: string,
  pluginId: string,
): Set<string> {
  let byNode = nodeVolumeIndexes.get(ctx);
  if (!byNode) {
    byNode = new Map();
    nodeVolumeIndexes.set(ctx, byNode);
  }
  let entry = byNode.get(nodeId);
  if (!entry) {
    if (ctx.usage) {
      const planned = plannedOnNode(ctx, nodeId, 0);
      const volumes = [...liveVolumesFromIndex(ctx, ctx.usage, nodeId), ...volumesOf(ctx, planned)];
      entry = { volumes, seen: ctx.planned.length };
    } else {
      const live = [
        ...ctx.state.allocsByNode(nodeId).filter((a) => !isAllocTerminal(a) && !ctx.stopping.has(a.ID)),
        ...plannedOnNode(ctx, nodeId, 0),
      ];
      entry = { volumes: volumesOf(ctx, live), seen: ctx.planned.length };
    }
    byNode.set(nodeId, entry);
  } else if (entry.seen < ctx.planned.length) {
    const added = plannedOnNode(ctx, nodeId, entry.seen);
    entry.volumes.push(...volumesOf(ctx, added));
    entry.seen = ctx.planned.length;
  }
  const out = new Set<string>();
  for (const v of entry.volumes) {
    if (v.pluginId === pluginId) out.add(v.namespace === namespace ? v.id : `${v.namespace}/${v.id}`);
  }
  return out;
}
