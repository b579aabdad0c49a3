/**
 * The exec driver's mount plan: what the init script mounts into the task's root before it
 * chroots, in order. Paths are validated here, in TypeScript, so the shell only ever sees checked
 * values; the plan travels to the script as arguments (never through a file the task could edit).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { BerthError } from "../../../structs/errors.js";
import type { TaskMount, TaskStartConfig } from "../driver.js";
import { berthRoot } from "../shared/launch.js";

/**
 * How one entry is mounted (see init_script.ts):
 * - bind:          non-recursive bind, made private (host system dirs, /alloc);
 * - rbind-private: recursive bind, made rprivate (volume mounts with private propagation);
 * - rbind-slave:   recursive bind, made rslave: host mounts flow in, nothing flows out (/dev, /proc,
 *                  host-to-task volume mounts);
 * - bidirectional: recursive bind left in the source's shared peer group, so mounts the task makes
 *                  under it appear on the host (CSI plugins);
 * - sysfs:         a fresh sysfs, read-only (source ignored), as Nomad's exec driver mounts /sys;
 * - dev-minimal:   a tmpfs holding copies of the host's null, zero, full, random, urandom and tty
 *                  device nodes (`cp -a` makes them with mknod, as libcontainer does outside a user
 *                  namespace), a private devpts (pts, ptmx), a tmpfs shm and the
 *                  fd/stdin/stdout/stderr links: the device set Nomad's exec driver gives an
 *                  ordinary task.
 */
export type PlanKind = "bind" | "rbind-private" | "rbind-slave" | "bidirectional" | "sysfs" | "dev-minimal";

export interface PlanEntry {
  kind: PlanKind;
  /** Host path. */
  source: string;
  /** Absolute path inside the task's root. */
  dest: string;
  readOnly: boolean;
}

/** Host directories every exec task sees read-only (those that exist). */
export const CHROOT_ENV_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr", "/etc"];

const SAFE_TASK_PATH = /^(\/[A-Za-z0-9_.@+=:,-]+)+$/;

/** Checks a destination inside the task: absolute, normalised, no `..`, safe characters, not "/". */
export function validateTaskPath(taskName: string, dest: string): string {
  const bad = (why: string) =>
    new BerthError(
      "ERR_VALIDATION",
      `task ${JSON.stringify(taskName)}: mount destination ${JSON.stringify(dest)} ${why}`,
      { field: "VolumeMounts.Destination" },
    );
  if (!dest.startsWith("/")) throw bad("must be an absolute path");
  if (dest.split("/").some((seg) => seg === ".." || seg === ".")) throw bad("must not contain '.' or '..'");
  if (!SAFE_TASK_PATH.test(dest)) {
    throw bad(
      "may only contain letters, digits and _ . @ + = : , - separated by single '/' (not '/' itself)",
    );
  }
  return dest;
}

/** Host paths reach the init script as arguments; tabs and newlines are refused outright. */
export function checkHostPath(what: string, p: string): string {
  if (!path.isAbsolute(p)) throw new BerthError("ERR_DRIVER", `${what} ${JSON.stringify(p)} is not absolute`);
  if (/[\t\n\r\0]/.test(p)) {
    throw new BerthError("ERR_DRIVER", `${what} ${JSON.stringify(p)} contains a tab, newline or NUL`);
  }
  return p;
}

/** How a task mount is bound (also when it is refreshed in a running task). */
export function kindFor(m: TaskMount): PlanKind {
  switch (m.propagation) {
    case "bidirectional":
      return "bidirectional";
    case "host-to-task":
      return "rbind-slave";
    default:
      return "rbind-private";
  }
}

function isUnder(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/**
 * Builds the plan for a task whose canonical root is `root`. Host system dirs that are symlinks
 * (merged /usr: /bin -> usr/bin) are recreated as the same symlink inside the root instead of
 * being mounted, so the chroot looks like the host.
 *
 * Every task gets /proc (the host's: tasks share the host's PID namespace), /sys read-only, and
 * /etc read-only (resolv.conf, hosts, passwd, …; a resolv.conf that links outside /etc, as
 * systemd-resolved's does, is bound at its target too). /dev is the minimal set for ordinary
 * tasks; a privileged task (a CSI plugin, which Nomad runs privileged) gets the host's /dev, so it
 * sees block devices and the loop devices it attaches.
 */
export async function buildMountPlan(cfg: TaskStartConfig, root: string): Promise<PlanEntry[]> {
  const plan: PlanEntry[] = [];
  const covered: string[] = [];
  for (const dir of CHROOT_ENV_DIRS) {
    const st = await fs.lstat(dir).catch(() => null);
    if (st === null) continue;
    if (st.isSymbolicLink()) {
      await ensureSymlink(path.join(root, dir), await fs.readlink(dir));
      continue;
    }
    if (!st.isDirectory()) continue;
    plan.push({ kind: "bind", source: dir, dest: dir, readOnly: true });
    covered.push(await fs.realpath(dir));
  }
  const resolv = await fs.realpath("/etc/resolv.conf").catch(() => null);
  if (resolv !== null && !covered.some((c) => isUnder(resolv, c)) && SAFE_TASK_PATH.test(resolv)) {
    plan.push({ kind: "bind", source: checkHostPath("resolv.conf", resolv), dest: resolv, readOnly: true });
  }
  plan.push({
    kind: cfg.privileged ? "rbind-slave" : "dev-minimal",
    source: "/dev",
    dest: "/dev",
    readOnly: false,
  });
  plan.push({ kind: "rbind-slave", source: "/proc", dest: "/proc", readOnly: false });
  // Read-only by its mount options; the plan's readOnly would remount only the top mount anyway.
  plan.push({ kind: "sysfs", source: "/sys", dest: "/sys", readOnly: false });
  plan.push({
    kind: "bind",
    source: checkHostPath("alloc dir", cfg.allocSharedDir),
    dest: "/alloc",
    readOnly: false,
  });

  // berth itself, so `berth csi-hostpath` runs inside exec tasks.
  for (const hostDir of [berthRoot(), path.dirname(process.execPath)]) {
    const real = await fs.realpath(hostDir);
    if (covered.some((c) => isUnder(real, c))) continue;
    checkHostPath("berth installation dir", real);
    plan.push({ kind: "bind", source: real, dest: real, readOnly: true });
    covered.push(real);
  }

  // Volume mounts last, shallowest first, so a mount nested in another lands inside it.
  const mounts = [...cfg.mounts].sort((a, b) => depth(a.taskPath) - depth(b.taskPath));
  for (const m of mounts) {
    validateTaskPath(cfg.taskName, m.taskPath);
    checkHostPath(`task ${JSON.stringify(cfg.taskName)}: mount source`, m.hostPath);
    await fs.stat(m.hostPath).catch((err: unknown) => {
      throw new BerthError(
        "ERR_DRIVER",
        `task ${JSON.stringify(cfg.taskName)}: mount source ${JSON.stringify(m.hostPath)} for ${m.taskPath} does not exist`,
        { cause: err },
      );
    });
    plan.push({ kind: kindFor(m), source: m.hostPath, dest: m.taskPath, readOnly: m.readOnly });
  }
  return plan;
}

function depth(p: string): number {
  return p.split("/").length;
}

async function ensureSymlink(linkPath: string, target: string): Promise<void> {
  const st = await fs.lstat(linkPath).catch(() => null);
  if (st?.isSymbolicLink() && (await fs.readlink(linkPath)) === target) return;
  if (st !== null) {
    // Only an empty directory (a stale mount point) may be replaced; anything else is the task's.
    if (!st.isDirectory()) {
      throw new BerthError("ERR_DRIVER", `${linkPath} exists and is not the expected symlink to ${target}`);
    }
    await fs.rmdir(linkPath);
  }
  await fs.symlink(target, linkPath);
}

/**
 * Creates, in TypeScript, the mount points of the plan's top-level directory entries (/usr, /etc,
 * /dev, /proc, /sys, /alloc, …): one `mkdir` process fewer per entry in the init script, which
 * skips an existing directory (100 tasks starting at once on a small node spend their setup in
 * fork and exec). Only a single component under the canonical root: `mkdir` does not follow a
 * symlink in its last component (an existing one fails with EEXIST and is left alone), so nothing
 * is created outside the root; the script still checks every destination for symlinks before it
 * mounts.
 */
export async function premakeMountPoints(root: string, plan: readonly PlanEntry[]): Promise<void> {
  for (const e of plan) {
    if (e.dest.lastIndexOf("/") !== 0 || !(await isDirectory(e.source))) continue;
    await fs.mkdir(path.join(root, e.dest)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
  }
}

async function isDirectory(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => null))?.isDirectory() ?? false;
}
