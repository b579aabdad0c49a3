/**
 * csi-hostpath's capacity per topology segment, settable for tests (issue 33 item 2):
 * `--capacity=BYTES` is the total of every segment, `--capacity-KEY=VALUE=BYTES` the total of the
 * segments with KEY=VALUE (the smallest when several match). Every instance of one plugin shares a
 * state dir (emulated shared storage), so each should be given the same flags: whichever controller
 * answers knows every segment.
 *
 * GetCapacity (with any capacity flag): the segment's total minus the sizes of the volumes
 * accessible in it — a volume counts against segment S when one of its accessible segments holds
 * all of S's key/values, or when it has none (reachable from anywhere); a request without
 * accessible_topology counts every volume against `--capacity`. A request whose capabilities
 * csi-hostpath cannot serve (block, no mount) answers 0, as the spec asks. A segment no flag covers
 * answers the state dir's free space, as without flags. CreateVolume refuses a new volume larger than
 * what is left in its segment (OUT_OF_RANGE, naming the segment), so a CO that ignores capacity
 * meets the same limit.
 */
import fs from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import type { WireVolumeCapability } from "../wire.js";
import { rpcError, type HostpathContext } from "./context.js";
import { accessibleTopology, type Segments } from "./topology.js";
import type { HostpathCapacity } from "./capacity_flags.js";

function configured(c: HostpathCapacity | undefined): c is HostpathCapacity {
  return c !== undefined && (c.total !== null || c.segments.length > 0);
}

/** The total of segment `seg`, or null when no flag covers it. */
function totalOf(c: HostpathCapacity, seg: Segments): number | null {
  const matching = c.segments.filter((s) => seg[s.key] === s.value).map((s) => s.bytes);
  return matching.length > 0 ? Math.min(...matching) : c.total;
}

/** Bytes of the volumes that count against `seg` (see the file comment). */
async function usedIn(ctx: HostpathContext, seg: Segments): Promise<number> {
  let used = 0;
  for (const id of await ctx.volumes.list()) {
    const vol = await ctx.volumes.get(id);
    if (!vol) continue;
    const topo = accessibleTopology(vol.accessibleTopology, ctx.config.topology);
    const counts =
      topo.length === 0 || topo.some((t) => Object.entries(seg).every(([k, v]) => t.segments[k] === v));
    if (counts) used += vol.capacityBytes;
  }
  return used;
}

/** Bytes left in `seg`, or null when no flag covers it. */
async function leftIn(ctx: HostpathContext, seg: Segments): Promise<number | null> {
  const c = ctx.config.capacity;
  if (!configured(c)) return null;
  const total = totalOf(c, seg);
  return total === null ? null : Math.max(0, total - (await usedIn(ctx, seg)));
}

/** The state dir's free space: GetCapacity's answer where no flag says otherwise. */
async function freeSpace(ctx: HostpathContext): Promise<object> {
  try {
    const st = await fs.statfs(ctx.config.stateDir);
    return { available_capacity: st.bavail * st.bsize };
  } catch (err) {
    throw rpcError(status.INTERNAL, `cannot read the free space of the state dir: ${(err as Error).message}`);
  }
}

export async function getSegmentCapacity(
  ctx: HostpathContext,
  req: {
    volume_capabilities?: WireVolumeCapability[];
    accessible_topology?: { segments: Segments } | null;
  },
): Promise<object> {
  if (!configured(ctx.config.capacity)) return freeSpace(ctx);
  if ((req.volume_capabilities ?? []).some((c) => c.block || !c.mount)) return { available_capacity: 0 };
  const left = await leftIn(ctx, req.accessible_topology?.segments ?? {});
  return left === null ? freeSpace(ctx) : { available_capacity: left };
}

/** OUT_OF_RANGE when a new volume of `bytes` does not fit in what is left of its segment. */
export async function checkRoom(
  ctx: HostpathContext,
  topology: Segments[] | null,
  bytes: number,
): Promise<void> {
  const seg = topology?.[0] ?? {};
  const left = await leftIn(ctx, seg);
  if (left !== null && bytes > left) {
    const name =
      Object.entries(seg)
        .map(([k, v]) => `${k}=${v}`)
        .join(",") || "(all segments)";
    throw rpcError(status.OUT_OF_RANGE, `segment ${name} has ${left} bytes left, the volume needs ${bytes}`);
  }
}
