/**
 * Refreshing one volume mount in a running exec task (TaskDriver.refreshMount): after a CSI node
 * plugin lost a publish and published it again, the host's target path holds a new mount, while the
 * task still has the private bind of the old one that the init script made at start.
 *
 * The kernel only binds within the caller's mount namespace (a bind aimed at /proc/<pid>/root/...
 * lands in the host's own namespace, not the task's), so the re-bind runs inside the task's
 * namespace: `nsenter --target <pid> --mount` with EXEC_REFRESH_SH. The new mount is found there at
 * the same host path because the plugin's directory is a shared mount (plugin_dir.ts): the task's
 * namespace, created after it with propagation unchanged, holds a peer copy of it, and the new
 * publish propagates into that copy. The script checks that the mount it finds at the source path
 * is that copy (same peer group as the host's mount), so a task whose namespace predates the shared
 * directory gets a clear error instead of a re-bind of its own stale mount.
 *
 * The shell parent of the task (the handle's pid) is not chrooted, so inside the namespace paths
 * are host paths and the task's destination is ROOT + DEST, as in init_script.ts.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import { promisify } from "node:util";
import { BerthError } from "../../../structs/errors.js";
import type { TaskMount } from "../driver.js";
import { findTool } from "../shared/proc.js";
import { MOUNT_ENTRY_SH, MOUNT_HELPERS_SH } from "./init_script.js";
import { kindFor } from "./mount_plan.js";
import { readMounts, type MountEntry } from "../../../internal/mountinfo.js";

const run = promisify(execFile);

/**
 *   sh -c EXEC_REFRESH_SH sh ROOT SRC DEST KIND RO PEER
 *
 * 1. SRC must be a mount point in this namespace whose topmost mount carries PEER (`shared:N`, the
 *    host mount's peer group): the propagated copy of the new mount, not a stale private one.
 * 2. ROOT+DEST must not resolve through a symlink.
 * 3. Every mount at ROOT+DEST (the stale copy) is detached lazily (one already gone is fine).
 * 4. SRC is mounted at ROOT+DEST exactly as at start (MOUNT_ENTRY_SH), read-only when RO is "ro".
 * Errors go to stderr with status 125; on success it prints "ok".
 */
export const EXEC_REFRESH_SH = `__berth_root=$1
__berth_src=$2
__berth_dst=$3
__berth_kind=$4
__berth_ro=$5
__berth_peer=$6
PATH=/usr/sbin:/usr/bin:/sbin:/bin
__berth_fail() {
  printf '%s\\n' "$*" >&2
  exit 125
}
__berth_fields=$(findmnt -n -M "$__berth_src" -o OPT-FIELDS) ||
  __berth_fail "$__berth_src is not a mount point in the task's mount namespace: the new mount did not reach it (the plugin directory was not a shared mount when the task started)"
__berth_nl='
'
__berth_fields=\${__berth_fields##*"$__berth_nl"}
case " $__berth_fields " in
*" $__berth_peer "*) ;;
*) __berth_fail "the mount at $__berth_src in the task's mount namespace is not a copy of the host's new mount (the plugin directory was not a shared mount when the task started)" ;;
esac
__berth_target=$__berth_root$__berth_dst
if [ "$(readlink -m -- "$__berth_target")" != "$__berth_target" ]; then
  __berth_fail "mount destination $__berth_dst resolves through a symlink"
fi
__berth_i=0
while findmnt -n -M "$__berth_target" >/dev/null; do
  __berth_i=$((__berth_i + 1))
  [ "$__berth_i" -le 16 ] || __berth_fail "cannot unmount the old mount at $__berth_dst: still mounted"
  if ! __berth_err=$(umount -l -- "$__berth_target" 2>&1) && findmnt -n -M "$__berth_target" >/dev/null; then
    __berth_fail "cannot unmount the old mount at $__berth_dst: $__berth_err"
  fi
done
${MOUNT_HELPERS_SH}
${MOUNT_ENTRY_SH}
printf 'ok\\n'`;

/** The peer group (`shared:N`) of the topmost mount at `p`; null when none is there or it is not shared. */
export function peerGroupAt(entries: MountEntry[], p: string): string | null {
  const top = entries.filter((e) => e.mountPoint === p).at(-1);
  return top?.optional.find((o) => o.startsWith("shared:")) ?? null;
}

/**
 * Re-binds `mount` in the mount namespace of `pid` (the exec task's shell parent, alive and
 * checked by the caller), whose task root is `root` (canonical).
 */
export async function refreshInTaskNamespace(opts: {
  pid: number;
  root: string;
  mount: TaskMount;
  timeoutMs: number;
}): Promise<void> {
  const { pid, root, mount } = opts;
  const fail = (why: string, cause?: unknown) =>
    new BerthError("ERR_DRIVER", `exec driver: cannot refresh the mount at ${mount.taskPath}: ${why}`, {
      cause,
    });
  const nsenter = await findTool("nsenter");
  if (nsenter === null) throw fail("nsenter not found");
  const [own, theirs] = await Promise.all([
    fs.readlink("/proc/self/ns/mnt"),
    fs.readlink(`/proc/${pid}/ns/mnt`).catch(() => null),
  ]);
  if (theirs === null) throw fail(`task process ${pid} is gone`);
  // Binding "into" the agent's own namespace would put the volume on the host.
  if (theirs === own) throw fail(`task process ${pid} shares the agent's mount namespace`);
  const peer = peerGroupAt(await readMounts(), mount.hostPath);
  if (peer === null) {
    throw fail(
      `${mount.hostPath} is not a shared mount on the host (is its plugin directory a shared mount?), so it cannot reach the task`,
    );
  }
  const args = ["--target", String(pid), "--mount", "--", "/bin/sh", "-c", EXEC_REFRESH_SH, "sh"];
  args.push(root, mount.hostPath, mount.taskPath, kindFor(mount), mount.readOnly ? "ro" : "rw", peer);
  try {
    await run(nsenter, args, {
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" },
      timeout: opts.timeoutMs,
      killSignal: "SIGKILL",
    });
  } catch (err) {
    const e = err as { stderr?: string; killed?: boolean; message: string };
    const detail = e.killed ? `did not finish within ${opts.timeoutMs} ms` : e.stderr?.trim() || e.message;
    throw fail(detail, err);
  }
}
