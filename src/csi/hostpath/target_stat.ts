/**
 * What real node plugins do before they unmount a target (Kubernetes' mount utils,
 * IsLikelyNotMountPoint): stat it. On a mount whose storage stopped answering (a dead NFS server,
 * a FUSE daemon that hangs) that stat hangs in the kernel, and so does the NodeUnpublish — which
 * is what berth's escalation of a hung unmount exists for (client/allocrunner/csi_escalate.ts).
 *
 * The stat runs in a child process (`stat`), not on one of this process's threadpool threads: a
 * stat stuck in D state would hold its thread until the file system answers, and a few of them
 * would stall every other file operation of the plugin (the other volumes' calls). The call waits
 * for the child however long it takes, as a real plugin's stat would. A missing path or any stat
 * error counts as "not mounted" and is left to the unmount that follows.
 */
import { execFile } from "node:child_process";

export function statTarget(target: string): Promise<void> {
  return new Promise((resolve) => {
    execFile("stat", ["-c", "%d", target], () => resolve());
  });
}
