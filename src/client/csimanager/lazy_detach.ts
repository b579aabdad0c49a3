/**
 * Escalation of a node unmount that hangs (issue 33 item 5, Nomad #10927): berth itself detaches a
 * volume's mounts lazily (`umount -l`, umount2(MNT_DETACH)) when the plugin's NodeUnpublish /
 * NodeUnstage did not answer within the operator's bound, so the release goes on.
 *
 * Contracts:
 * - Nothing here stats, reads or canonicalises a path that may be the hung mount: whether a path is
 *   a mount point comes from /proc/self/mountinfo (mountAt resolves only the parent), and the
 *   detach runs `umount -l --no-canonicalize` in a child process bounded by `timeoutMs`. A child
 *   stuck in the kernel (D state) is killed and abandoned, never awaited past the bound.
 * - Every mount stacked at the path is detached; a path that is not mounted is a no-op.
 * - A lazy detach removes the mount from the namespace at once; the file system itself is freed
 *   only when its last user lets go (the processes stuck on it), which is what "needs attention"
 *   tells the operator.
 */
import { spawn } from "node:child_process";
import { mountAt } from "../../internal/mountinfo.js";
import { BerthError } from "../../structs/errors.js";

/** Deadline of one `umount -l`: it never waits on the file system, so it is quick or stuck. */
export const LAZY_UMOUNT_TIMEOUT_MS = 10_000;

/** At most this many mounts stacked at one path are detached (a loop guard). */
const MAX_STACKED = 16;

/** Lazily detaches every mount at `hostPath`; answers how many were detached. */
export async function detachLazily(hostPath: string, timeoutMs = LAZY_UMOUNT_TIMEOUT_MS): Promise<number> {
  let n = 0;
  while (n < MAX_STACKED && (await mountAt(hostPath)) !== null) {
    await umountLazy(hostPath, timeoutMs);
    n++;
  }
  return n;
}

/** One `umount -l --no-canonicalize PATH` in a child process, abandoned after `timeoutMs`. */
function umountLazy(hostPath: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("umount", ["-l", "--no-canonicalize", hostPath], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      // Not awaited: a child stuck in the kernel exits only when the file system lets it.
      child.unref();
      reject(new BerthError("ERR_CSI_DEADLINE_EXCEEDED", `umount -l ${hostPath} did not finish`));
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`umount -l ${hostPath}: ${stderr.trim() || `exit ${String(code)}`}`));
    });
  });
}

/** What an escalation detached, in host paths ("" when that path was not detached). */
export interface DetachedVolume {
  targetPath: string;
  stagingPath: string;
}

/**
 * The publish target, then the staging when `lastUser` (nothing else on this node uses it) and
 * the plugin stages: each lazily detached. A detach that cannot finish throws; nothing after it ran.
 */
export async function detachVolumeLazily(
  paths: { hostTargetPath: string; hostStagingPath: string },
  detachStaging: boolean,
): Promise<DetachedVolume> {
  await detachLazily(paths.hostTargetPath);
  if (detachStaging) await detachLazily(paths.hostStagingPath);
  return { targetPath: paths.hostTargetPath, stagingPath: detachStaging ? paths.hostStagingPath : "" };
}
