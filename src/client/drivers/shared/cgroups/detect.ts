/**
 * Which cgroup hierarchy this host gives berth, and where the agent itself sits in it. berth
 * creates its task cgroups below the AGENT'S OWN cgroup (per controller on v1), never at the root,
 * so an agent confined to a cgroup — a container, a systemd service with delegation — keeps its
 * tasks inside its own limits and needs write access to nothing else.
 *
 * - v2 ("unified"): `<root>/cgroup.controllers` exists; the agent's cgroup is the `0::` line of
 *   /proc/self/cgroup.
 * - v1: a `cgroup` mount per controller (found in /proc/self/mountinfo); the agent's cgroup per
 *   controller is its line in /proc/self/cgroup, taken relative to the mount's own root (in a
 *   container the mount may start at the container's cgroup). berth uses memory, cpu and cpuset;
 *   memory is required, the others are used when mounted. A hybrid host (v1 controllers plus an
 *   empty cgroup2 mount at `<root>/unified`) is v1.
 * - off: not Linux, not root, or no memory controller: tasks run without limits.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { parseMountinfo } from "../../../../internal/mountinfo.js";

export type V1Controller = "memory" | "cpu" | "cpuset";

export type CgroupHost =
  | { mode: "v2"; /** The agent's own cgroup directory. */ base: string }
  | {
      mode: "v1";
      /** The agent's own cgroup directory per mounted controller. */ bases: Partial<
        Record<V1Controller, string>
      >;
    }
  | { mode: "off"; reason: string };

export interface DetectPaths {
  /** The cgroup filesystem root; default /sys/fs/cgroup. */
  root?: string;
  /** Default /proc/self/cgroup. */
  procCgroup?: string;
  /** Default /proc/self/mountinfo. */
  mountinfo?: string;
  /** Skip the "must be root" check (tests on a temp tree). */
  anyUser?: boolean;
}

export async function detectCgroups(p: DetectPaths = {}): Promise<CgroupHost> {
  const root = p.root ?? "/sys/fs/cgroup";
  if (process.platform !== "linux") return { mode: "off", reason: "cgroups need Linux" };
  if (!p.anyUser && process.getuid?.() !== 0)
    return { mode: "off", reason: "cgroups need the agent to run as root" };
  const own = parseProcCgroup(await readOr(p.procCgroup ?? "/proc/self/cgroup"));
  if (await exists(path.join(root, "cgroup.controllers"))) {
    const rel = own.get("") ?? "/";
    return { mode: "v2", base: joinUnder(root, rel) };
  }
  const mounts = parseCgroupMounts(await readOr(p.mountinfo ?? "/proc/self/mountinfo"));
  const bases: Partial<Record<V1Controller, string>> = {};
  for (const c of ["memory", "cpu", "cpuset"] as const) {
    const m = mounts.find((x) => x.controllers.includes(c));
    const ownPath = [...own.entries()].find(([k]) => k.split(",").includes(c))?.[1];
    if (!m || ownPath === undefined) continue;
    // The mount shows the hierarchy from m.root down; the agent's path is absolute in it.
    const rel =
      ownPath === m.root || ownPath.startsWith(`${m.root}/`) ? ownPath.slice(m.root.length) : ownPath;
    bases[c] = joinUnder(m.mountPoint, rel === "" ? "/" : rel);
  }
  if (bases.memory === undefined) return { mode: "off", reason: "no cgroup memory controller is mounted" };
  return { mode: "v1", bases };
}

/** /proc/<pid>/cgroup: `hierarchy-id:controllers:path` → controllers ("" for v2) → path. */
export function parseProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

interface CgroupMount {
  root: string;
  mountPoint: string;
  controllers: string[];
}

/** The v1 `cgroup` mounts in a mountinfo text, with their controllers (from the super options). */
export function parseCgroupMounts(text: string): CgroupMount[] {
  return parseMountinfo(text)
    .filter((m) => m.fsType === "cgroup")
    .map((m) => ({ root: m.root, mountPoint: m.mountPoint, controllers: m.superOptions }));
}

function joinUnder(base: string, rel: string): string {
  const p = path.posix.normalize(`/${rel}`);
  return p === "/" ? base : path.join(base, p);
}

async function readOr(file: string): Promise<string> {
  return fs.readFile(file, "utf8").catch(() => "");
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
