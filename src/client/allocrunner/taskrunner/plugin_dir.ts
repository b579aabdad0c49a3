/**
 * The host side of a CSI plugin's bidirectional mount: the plugin's directory bound onto itself and
 * made shared, so the plugin task's bind of it stays in this peer group and the staging/publish
 * mounts the plugin makes show up here on the host. Every exec task's mount namespace made after
 * that holds a peer copy of it too, so a volume published again under it (after the plugin lost
 * the mount) reaches running tasks at the same host path, where their driver re-binds it.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import { promisify } from "node:util";
import { canonicalPath, isMountPoint, mountsUnder } from "../../../internal/mountinfo.js";

const run = promisify(execFile);

/**
 * True when `dir` is not a mount point itself but something is mounted below it: binding it onto
 * itself (non-recursively) would hide those mounts. Only a plugin directory made before berth
 * shared it (an upgrade, raw_exec) looks like this.
 */
export async function hasMountsBelowUnshared(dir: string): Promise<boolean> {
  const mounts = await mountsUnder(dir);
  return mounts.length > 0 && !mounts.includes(await canonicalPath(dir));
}

/** Creates `dir`, binds it onto itself unless it already is a mount point, and makes it shared. */
export async function ensureSharedDir(dir: string, signal: AbortSignal): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  if (!(await isMountPoint(dir))) await run("mount", ["--bind", dir, dir], { signal });
  await run("mount", ["--make-shared", dir], { signal });
}

/** Unmounts `dir` and everything below it; nothing mounted is not an error. */
export async function unmountTree(dir: string): Promise<void> {
  if ((await mountsUnder(dir)).length === 0) return;
  try {
    await run("umount", ["-R", dir]);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? "";
    if (!/not mounted|no mount point/i.test(stderr)) throw err;
  }
}
