/**
 * The ownership walk berth (or csi-hostpath) applies to a volume for a mount group
 * (structs/mount_group.ts): every entry below `root` gets group `gid`; directories get setgid and
 * g+rwx, regular files g+rw and g+x when the owner may execute (Kubernetes' fsGroup walk). It never
 * follows a symbolic link (lchown; a link's own mode is not changed) and never leaves the root's
 * file system (a mount below the root is another volume). The walk is iterative, checks `signal`
 * between entries, and answers how many entries it changed.
 */
import fs from "node:fs/promises";
import path from "node:path";
import {
  DIR_GROUP_BITS,
  FILE_GROUP_BITS,
  needsOwnershipWalk,
  type MountGroupPolicy,
} from "../structs/mount_group.js";
import { throwIfAborted } from "./abort.js";

export interface OwnershipResult {
  /** False when the policy found the root already right (on_root_mismatch) and walked nothing. */
  walked: boolean;
  /** Entries whose group or mode this walk changed. */
  changed: number;
}

export async function applyGroupOwnership(
  root: string,
  gid: number,
  policy: MountGroupPolicy | undefined,
  signal?: AbortSignal,
): Promise<OwnershipResult> {
  const top = await fs.lstat(root);
  if (!needsOwnershipWalk(policy, { gid: top.gid, mode: top.mode }, gid))
    return { walked: false, changed: 0 };
  let changed = 0;
  const stack = [root];
  while (stack.length > 0) {
    throwIfAborted(signal);
    const p = stack.pop()!;
    const st = await fs.lstat(p);
    if (st.dev !== top.dev) continue;
    if (st.gid !== gid) {
      await fs.lchown(p, st.uid, gid);
      changed++;
    }
    if (st.isSymbolicLink()) continue;
    const want = st.isDirectory()
      ? st.mode | DIR_GROUP_BITS
      : st.mode | FILE_GROUP_BITS | (st.mode & 0o100 ? 0o010 : 0);
    // chown(2) clears setgid on a non-directory; a directory's mode is set after its chown.
    if (st.isDirectory() || st.isFile()) {
      if ((want & 0o7777) !== (st.mode & 0o7777) || st.gid !== gid) {
        await fs.chmod(p, want & 0o7777);
        if (st.gid === gid) changed++;
      }
    }
    if (st.isDirectory()) {
      for (const name of await fs.readdir(p)) stack.push(path.join(p, name));
    }
  }
  return { walked: true, changed };
}
