/**
 * Node feasibility for a volume the job creates on first placement (`volume { create { … } }`,
 * structs/job_volume_create.ts) that does not exist yet: the create happens where the alloc runs
 * (WaitForFirstConsumer), so the node must be able to use a volume made for it.
 *
 * A node fits when: it runs a healthy node plugin of the create's plugin; the plugin has a healthy
 * controller somewhere (the leader creates through it); the plugin's max volumes on the node leave
 * room; the node's topology meets one of the create's `required` topologies (when written); and the
 * volume, with a taken claim for every live or planned alloc that will use it, can take this claim
 * (the claim rules of structs/claim.ts on the volume as it will be created, so two placements of
 * one single-writer volume to be created are never made).
 *
 * And capacity: the node's topology segment must not be known too small for the create's
 * RequestedCapacityMin (the leader's capacity poll, structs/capacity_fit.ts; unknown allows).
 */
import { allocIndex, allocTaskGroup, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { checkClaim } from "../../structs/claim.js";
import {
  claimModeOf,
  volumeSourceForAlloc,
  type Job,
  type VolumeCreateSpec,
  type VolumeRequest,
} from "../../structs/job.js";
import { segmentLabel, segmentVerdict } from "../../structs/capacity_fit.js";
import { ownEntry, type Node } from "../../structs/node.js";
import { newVolume, type CSIVolume, type Topology, type VolumeClaim } from "../../structs/volume.js";
import {
  claimRefusalReason,
  topologyMatches,
  volumesInUseOnNode,
  type CsiPlanContext,
} from "./csi_feasibility.js";

type ClaimWant = Pick<VolumeClaim, "AllocationID" | "Mode" | "AccessMode" | "AttachmentMode">;

export function newVolumeFeasible(
  ctx: CsiPlanContext,
  node: Node,
  job: Job,
  req: VolumeRequest & { Create: VolumeCreateSpec },
  volumeId: string,
  want: ClaimWant,
): string | null {
  const c = req.Create;
  const plugin = ownEntry(node.CSINodePlugins, c.PluginID);
  if (!plugin) return `CSI plugin ${c.PluginID} is missing from client ${node.ID}`;
  if (!plugin.Healthy) return `CSI plugin ${c.PluginID} is unhealthy on client ${node.ID}`;
  if ((ctx.state.pluginSummary(c.PluginID)?.ControllersHealthy ?? 0) === 0)
    return `CSI plugin ${c.PluginID} has no healthy controller to create volume ${volumeId}`;
  const max = plugin.NodeInfo?.MaxVolumes ?? 0;
  if (max > 0) {
    const inUse = volumesInUseOnNode(ctx, node.ID, job.Namespace, c.PluginID);
    if (!inUse.has(volumeId) && inUse.size >= max)
      return `CSI plugin ${c.PluginID} has the maximum number of volumes on client ${node.ID}`;
  }
  const nodeTopo = plugin.NodeInfo?.AccessibleTopology ?? null;
  const required = c.RequestedTopologies?.Required ?? [];
  if (required.length > 0 && (!nodeTopo || !required.some((t) => topologyMatches(t, nodeTopo))))
    return "did not meet topology requirement";
  const capacity = capacityRefusal(ctx, c, nodeTopo);
  if (capacity) return capacity;
  const vol = proposedNewVolume(ctx, job.Namespace, volumeId, req);
  const refusal = checkClaim(vol, { ...want, NodeID: node.ID, ExternalNodeID: plugin.NodeInfo?.ID ?? "" });
  return refusal ? claimRefusalReason(volumeId, want.Mode, refusal) : null;
}

/**
 * The node's segment known too small for the create's capacity_min (the leader's last GetCapacity
 * answers, structs/capacity_fit.ts): the reason, else null. Unknown or stale capacity allows, as
 * for `volume create`; a plugin without topology is measured as a whole (the empty segment).
 */
function capacityRefusal(
  ctx: CsiPlanContext,
  create: VolumeCreateSpec,
  nodeTopo: Topology | null,
): string | null {
  const need = create.RequestedCapacityMin;
  const entries = ctx.state.getPluginCapacity(create.PluginID)?.Entries ?? [];
  if (need <= 0 || entries.length === 0) return null;
  const segments = nodeTopo?.Segments ?? {};
  const verdict = segmentVerdict(entries, segments, need, Date.now());
  if (verdict.state !== "too-small") return null;
  const free = verdict.entry ? `${verdict.entry.AvailableBytes} bytes free` : "too little room";
  return `CSI plugin ${create.PluginID} has ${free} in ${segmentLabel(segments)}, and the volume to create needs ${need}`;
}

/** Per plan: the to-be-created volumes' proposed views, and how many of ctx.planned they took in. */
const views = new WeakMap<CsiPlanContext, Map<string, { vol: CSIVolume; seen: number }>>();

/**
 * The volume as the create will make it, with a taken claim for each live (state) or planned alloc
 * that uses it: built once per plan and volume, then extended with new placements only.
 */
function proposedNewVolume(
  ctx: CsiPlanContext,
  namespace: string,
  volumeId: string,
  req: VolumeRequest & { Create: VolumeCreateSpec },
): CSIVolume {
  let byVolume = views.get(ctx);
  if (!byVolume) {
    byVolume = new Map();
    views.set(ctx, byVolume);
  }
  const key = `${namespace}\u0000${volumeId}`;
  let view = byVolume.get(key);
  if (!view) {
    const base = newVolume({
      ID: volumeId,
      Namespace: namespace,
      PluginID: req.Create.PluginID,
      RequestedCapabilities: req.Create.RequestedCapabilities,
      Schedulable: true,
    });
    const live = ctx.state
      .allocsByVolume(namespace, volumeId)
      .filter((a) => !isAllocTerminal(a) && !ctx.stopping.has(a.ID));
    view = { vol: withClaims(base, live), seen: 0 };
    byVolume.set(key, view);
  }
  if (view.seen < ctx.planned.length) {
    const added = ctx.planned.slice(view.seen).filter((a) => a.Namespace === namespace);
    view.vol = withClaims(view.vol, added);
    view.seen = ctx.planned.length;
  }
  return view.vol;
}

/** `vol` with a taken claim for each of `allocs` whose group requests it. */
function withClaims(vol: CSIVolume, allocs: readonly Allocation[]): CSIVolume {
  let out = vol;
  for (const a of allocs) {
    const r = Object.values(allocTaskGroup(a)?.Volumes ?? {}).find(
      (x) => x.Type === "csi" && volumeSourceForAlloc(x, allocIndex(a)) === vol.ID,
    );
    if (!r || out.ReadClaims[a.ID] || out.WriteClaims[a.ID]) continue;
    const claim: VolumeClaim = {
      AllocationID: a.ID,
      NodeID: a.NodeID,
      ExternalNodeID: "",
      Mode: claimModeOf(r),
      AccessMode: r.AccessMode || "single-node-writer",
      AttachmentMode: r.AttachmentMode || "file-system",
      State: "taken",
    };
    const side = claim.Mode === "write" ? "WriteClaims" : "ReadClaims";
    out = {
      ...out,
      [side]: { ...out[side], [a.ID]: claim },
      AccessMode: out.AccessMode || claim.AccessMode,
      AttachmentMode: out.AttachmentMode || claim.AttachmentMode,
    };
  }
  return out;
}
