/**
 * NodeGetVolumeStats of csi-hostpath (GET_VOLUME_STATS and VOLUME_CONDITION): a volume is a
 * directory, so its usage is what its own files take, measured through the published path:
 * - bytes used: the blocks allocated to every file and directory below volume_path (as `du`), a
 *   file with several links counted once; inodes used: how many there are, the root included;
 * - available/total: with a recorded capacity, total = capacity and available = capacity − used;
 *   without one (or with --report-capacity-zero), the filesystem's own figures (statfs);
 *   inodes always the filesystem's;
 * - condition: abnormal when the volume's directory under the state dir is gone (removed behind
 *   the plugin's back; a bind mount of it still shows what was open), with a message saying so.
 *
 * The walk stays on the volume's filesystem (it does not descend into other mounts below it) and
 * never follows symlinks.
 */
import type { Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { mountAt } from "../../internal/mountinfo.js";
import { reportedCapacity } from "./controller.js";
import { rpcError, type HostpathContext } from "./context.js";

export interface DirUsage {
  bytes: number;
  inodes: number;
}

/** What the tree below `root` takes: allocated bytes and entries, on `root`'s filesystem only. */
export async function dirUsage(root: string): Promise<DirUsage> {
  const top = await fs.lstat(root);
  const seen = new Set<string>();
  let bytes = top.blocks * 512;
  let inodes = 1;
  const dirs = [root];
  while (dirs.length > 0) {
    const dir = dirs.pop()!;
    let entries: string[];
    try {
      entries = await fs.readdir(dir);
    } catch (err) {
      // Removed while walking: it takes nothing any more.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    for (const name of entries) {
      const p = path.join(dir, name);
      let st: Stats;
      try {
        st = await fs.lstat(p);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      if (st.dev !== top.dev) continue;
      if (!st.isDirectory() && st.nlink > 1) {
        const key = String(st.ino);
        if (seen.has(key)) continue;
        seen.add(key);
      }
      bytes += st.blocks * 512;
      inodes += 1;
      if (st.isDirectory()) dirs.push(p);
    }
  }
  return { bytes, inodes };
}

/** Whether the mount at volume_path comes from this volume (the kernel marks a deleted root). */
function fromVolume(root: string, id: string): boolean {
  const r = root.endsWith("//deleted") ? root.slice(0, -"//deleted".length) : root;
  return r.endsWith("/volumes/" + id);
}

export async function nodeGetVolumeStats(
  ctx: HostpathContext,
  req: { volume_id: string; volume_path: string; staging_target_path: string },
): Promise<object> {
  if (!req.volume_id) throw rpcError(status.INVALID_ARGUMENT, "volume_id is required");
  if (!req.volume_path) throw rpcError(status.INVALID_ARGUMENT, "volume_path is required");
  const vol = await ctx.volumes.get(req.volume_id);
  if (!vol) throw rpcError(status.NOT_FOUND, `volume ${req.volume_id} not found`);
  const mounted = await mountAt(req.volume_path);
  if (!mounted || !fromVolume(mounted.root, vol.id)) {
    throw rpcError(status.NOT_FOUND, `volume ${vol.id} is not published at ${req.volume_path}`);
  }
  const used = await dirUsage(req.volume_path);
  const fsStats = await fs.statfs(req.volume_path);
  const capacity = reportedCapacity(ctx, vol.capacityBytes);
  const bytes =
    capacity > 0
      ? { total: capacity, available: Math.max(0, capacity - used.bytes) }
      : { total: fsStats.blocks * fsStats.bsize, available: fsStats.bavail * fsStats.bsize };
  const dir = ctx.volumes.dirOf(vol.id);
  const missing = await isMissingDir(dir);
  return {
    usage: [
      { unit: "BYTES", used: used.bytes, ...bytes },
      { unit: "INODES", used: used.inodes, total: fsStats.files, available: fsStats.ffree },
    ],
    volume_condition: missing
      ? { abnormal: true, message: `volume directory ${dir} is missing` }
      : { abnormal: false, message: "volume directory is present" },
  };
}

/** Whether `dir` is gone (or is no directory any more). */
export async function isMissingDir(dir: string): Promise<boolean> {
  try {
    return !(await fs.stat(dir)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw err;
  }
}
