/**
 * Removes a publish target or staging path after the plugin released it, then the parents it left
 * empty, up to (not including) `stopAt`. Only empty directories and plain files are removed
 * (rmdir/unlink, never a recursive delete), and the kernel refuses both on a mount point (EBUSY),
 * so a volume the plugin failed to unmount can never lose data here. A path still mounted (per
 * /proc/self/mountinfo) is left alone before any stat: the mount may be one that hangs.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../internal/log.js";
import { isMountPoint } from "../../internal/mountinfo.js";

export async function removeReleasedPath(target: string, stopAt: string, log: Logger): Promise<void> {
  const root = path.resolve(stopAt);
  let current = path.resolve(target);
  if (!current.startsWith(root + path.sep)) return;
  if (await isMountPoint(current)) {
    log.warn("released path is still mounted; left in place", { path: current });
    return;
  }
  try {
    const st = await fs.lstat(current);
    if (st.isDirectory()) await fs.rmdir(current);
    else await fs.unlink(current);
  } catch (err) {
    if (code(err) !== "ENOENT") {
      log.warn("could not remove released path", { path: current, error: err });
      return;
    }
  }
  for (
    current = path.dirname(current);
    current.startsWith(root + path.sep);
    current = path.dirname(current)
  ) {
    try {
      await fs.rmdir(current);
    } catch (err) {
      const c = code(err);
      if (c === "ENOENT") continue;
      if (c !== "ENOTEMPTY" && c !== "EEXIST")
        log.warn("could not remove empty parent", { path: current, error: err });
      return;
    }
  }
}

function code(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined;
}
