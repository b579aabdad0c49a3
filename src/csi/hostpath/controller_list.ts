/**
 * ListVolumes and GetCapacity of csi-hostpath. ListVolumes reports the nodes a volume is published
 * to only in --attach-required mode, the only mode that knows them (and advertises
 * LIST_VOLUMES_PUBLISHED_NODES). GetCapacity is capacity.ts.
 */
import type { HostpathContext } from "./context.js";
import { volumeAnswer } from "./controller.js";
import { page } from "./paging.js";

export async function listVolumes(
  ctx: HostpathContext,
  req: { max_entries: number; starting_token: string },
): Promise<object> {
  const { entries, nextToken } = page(await ctx.volumes.list(), req.max_entries, req.starting_token);
  const out: object[] = [];
  for (const id of entries) {
    const vol = await ctx.volumes.get(id);
    // Deleted between the listing and this read: not part of the answer.
    if (!vol) continue;
    const { volume } = volumeAnswer(ctx, vol) as { volume: object };
    const status = ctx.config.attachRequired
      ? { published_node_ids: (await ctx.attachments.list(id)).map((a) => a.nodeId) }
      : null;
    out.push({ volume, status });
  }
  return { entries: out, next_token: nextToken };
}
