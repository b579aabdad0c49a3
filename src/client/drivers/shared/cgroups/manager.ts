/**
 * Creates and finds the tasks' cgroups (v1.ts, v2.ts) below the agent's own cgroup (detect.ts),
 * in a parent directory named `parent` ("berth" by default; tests give their own so they can check
 * that nothing of theirs is left). One directory per task start, named `<alloc id>.<task>`.
 *
 * Cores: a task with `cores` gets the cores the scheduler reserved for it, or else the lowest
 * cores of the agent's cpuset that no other pinned berth task holds. The choice and the creation
 * of pinned tasks' cgroups are serialised per manager, so two starts never take the same core; a
 * task without cores takes no core and is created at once, so many allocs starting together
 * (a node given 100 allocs) do not wait for each other's cgroups one by one.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { formatCpuList, parseCpuList, readControl, type TaskCgroup } from "./cgroup_fs.js";
import { type CgroupHost, type DetectPaths, detectCgroups } from "./detect.js";
import type { CgroupLimits } from "./limits.js";
import { V1Cgroup } from "./v1.js";
import { V2Cgroup } from "./v2.js";

export type { TaskCgroup } from "./cgroup_fs.js";

export const DEFAULT_CGROUP_PARENT = "berth";

const SAFE_NAME = /^[A-Za-z0-9_.@-]+$/;

export interface CgroupManagerOptions {
  parent?: string;
  detect?: DetectPaths;
}

export class CgroupManager {
  private readonly parent: string;
  private hostP: Promise<CgroupHost> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: CgroupManagerOptions = {}) {
    this.parent = opts.parent ?? DEFAULT_CGROUP_PARENT;
    if (!SAFE_NAME.test(this.parent) || this.parent.startsWith(".")) {
      throw new Error(`cgroup parent ${JSON.stringify(this.parent)} must be a plain directory name`);
    }
  }

  /** The host's hierarchy, detected once. */
  host(): Promise<CgroupHost> {
    this.hostP ??= detectCgroups(this.opts.detect);
    return this.hostP;
  }

  /** The directories holding this manager's task cgroups (to list or check them). */
  async parentDirs(): Promise<string[]> {
    const h = await this.host();
    if (h.mode === "v2") return [path.join(h.base, this.parent)];
    if (h.mode === "v1") return Object.values(h.bases).map((b) => path.join(b, this.parent));
    return [];
  }

  /**
   * A new cgroup for one task start with `limits` written, or null when this host has no usable
   * cgroups (mode off: the task runs unlimited). Throws, naming what failed, when it cannot be made.
   */
  create(allocId: string, taskName: string, limits: CgroupLimits): Promise<TaskCgroup | null> {
    const id = `${allocId}.${taskName}`;
    if (!SAFE_NAME.test(id)) throw new Error(`cannot name a cgroup after task ${JSON.stringify(id)}`);
    const make = async () => {
      const h = await this.host();
      if (h.mode === "off") return null;
      if (h.mode === "v2") {
        const cpus = limits.cores > 0 ? await this.pickCores(h.base, limits, "cpuset.cpus.effective") : null;
        return V2Cgroup.create(h.base, this.parent, id, limits, cpus);
      }
      let cpus: string | null = null;
      if (limits.cores > 0) {
        if (h.bases.cpuset === undefined)
          throw new Error("task needs cores but the cpuset controller is not mounted");
        cpus = await this.pickCores(h.bases.cpuset, limits, "cpuset.cpus");
      }
      return V1Cgroup.create(h.bases, this.parent, id, limits, cpus);
    };
    // An unpinned cgroup's cpuset is empty (inherited): it never counts as holding a core.
    if (limits.cores <= 0) return make();
    const run = this.queue.then(make);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The cpuset list for a pinned task (see the module comment). */
  private async pickCores(base: string, limits: CgroupLimits, availableFile: string): Promise<string> {
    const available = parseCpuList(
      await readControl(base, availableFile).catch(() => readControl(base, "cpuset.cpus")),
    );
    if (limits.reservedCores.length > 0) {
      const outside = limits.reservedCores.filter((c) => !available.includes(c));
      if (outside.length > 0) {
        throw new Error(
          `reserved cores ${formatCpuList(outside)} are not in the agent's cpuset (${formatCpuList(available)})`,
        );
      }
      return formatCpuList(limits.reservedCores);
    }
    const taken = new Set<number>();
    const parentDir = path.join(base, this.parent);
    const siblings = await fs.readdir(parentDir, { withFileTypes: true }).catch(() => []);
    for (const s of siblings) {
      if (!s.isDirectory()) continue;
      const cpus = await readControl(path.join(parentDir, s.name), "cpuset.cpus").catch(() => "");
      for (const c of parseCpuList(cpus)) taken.add(c);
    }
    const free = available.filter((c) => !taken.has(c));
    if (free.length < limits.cores) {
      throw new Error(
        `task needs ${limits.cores} cores but only ${free.length} of the agent's cpuset (${formatCpuList(available)}) are free`,
      );
    }
    return formatCpuList(free.slice(0, limits.cores));
  }
}

/** The cgroup a task's handle recorded (TaskCgroup.state), or null for none / an unreadable record. */
export function cgroupFromState(state: unknown): TaskCgroup | null {
  if (typeof state !== "string" || state === "") return null;
  let rec: unknown;
  try {
    rec = JSON.parse(state);
  } catch {
    return null;
  }
  if (typeof rec !== "object" || rec === null) return null;
  const r = rec as { mode?: unknown; dir?: unknown; dirs?: unknown };
  if (r.mode === "v2" && typeof r.dir === "string" && path.isAbsolute(r.dir)) return new V2Cgroup(r.dir);
  if (r.mode === "v1" && typeof r.dirs === "object" && r.dirs !== null) {
    const dirs: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.dirs)) {
      if ((k === "memory" || k === "cpu" || k === "cpuset") && typeof v === "string" && path.isAbsolute(v))
        dirs[k] = v;
    }
    return new V1Cgroup(dirs);
  }
  return null;
}
