/**
 * A task's cgroups on a v1 host: one directory per controller, `<agent's cgroup>/<parent>/<id>`,
 * written as Nomad's executor writes them (configureCG1):
 *
 * - memory: memory.limit_in_bytes = the hard limit (none: -1, unlimited), memory.soft_limit_in_bytes
 *   = the soft limit (none: -1), memory.swappiness = 0 (Nomad) and, where swap accounting
 *   exists, memory.memsw.limit_in_bytes = the hard limit (memory + swap may not exceed it: no swap);
 * - cpu: cpu.shares;
 * - cpuset (only for a task with `cores`): cpuset.cpus = its cores, cpuset.mems = the parent's.
 *   v1 cpuset directories start empty (cgroup.clone_children 0), so berth's own parent directory
 *   is given its parent's cpus and mems when it is created.
 *
 * OOM kills: the `oom_kill` counter of memory.oom_control (Linux 4.13+).
 */
import path from "node:path";
import type { V1Controller } from "./detect.js";
import {
  killAll,
  killAndRemove,
  mkdirOwn,
  readControl,
  readKeyed,
  type CgroupUsage,
  type TaskCgroup,
  writeControl,
  writeIfPresent,
} from "./cgroup_fs.js";
import type { CgroupLimits } from "./limits.js";
import { v1Usage } from "./usage.js";

export class V1Cgroup implements TaskCgroup {
  constructor(readonly dirs: Partial<Record<V1Controller, string>>) {}

  get state(): string {
    return JSON.stringify({ mode: "v1", dirs: this.dirs });
  }

  /**
   * Creates the task's directories and writes `limits`. `cpus` (a cpuset list) only for a task
   * pinned to cores. On any failure the directories created so far are removed again.
   */
  static async create(
    bases: Partial<Record<V1Controller, string>>,
    parent: string,
    id: string,
    limits: CgroupLimits,
    cpus: string | null,
  ): Promise<V1Cgroup> {
    const cg = new V1Cgroup({});
    try {
      const mem = await cg.make(bases, "memory", parent, id);
      // Every limit is written, "-1" (unlimited) included: a reused cgroup may hold old values.
      // memory+swap may never be below memory, so it is lifted first and set last (no swap).
      const hard = limits.memoryHardBytes === null ? "-1" : String(limits.memoryHardBytes);
      const swapAccounting = await writeIfPresent(mem, "memory.memsw.limit_in_bytes", "-1");
      await writeControl(mem, "memory.limit_in_bytes", hard);
      if (swapAccounting) await writeControl(mem, "memory.memsw.limit_in_bytes", hard);
      const soft = limits.memorySoftBytes > 0 ? String(limits.memorySoftBytes) : "-1";
      await writeControl(mem, "memory.soft_limit_in_bytes", soft);
      // As Nomad: best effort (very old kernels refuse it in non-root cgroups).
      await writeIfPresent(mem, "memory.swappiness", "0").catch(() => false);
      if (bases.cpu !== undefined) {
        const cpu = await cg.make(bases, "cpu", parent, id);
        await writeControl(cpu, "cpu.shares", String(limits.cpuShares));
      }
      if (cpus !== null) {
        if (bases.cpuset === undefined) throw new Error("the cpuset controller is not mounted");
        const base = bases.cpuset;
        const parentDir = path.join(base, parent);
        if (await mkdirOwn(parentDir)) await copyCpuset(base, parentDir);
        else if ((await readControl(parentDir, "cpuset.cpus")) === "") await copyCpuset(base, parentDir);
        const dir = await cg.make(bases, "cpuset", parent, id);
        await writeControl(dir, "cpuset.cpus", cpus);
        await writeControl(dir, "cpuset.mems", await readControl(parentDir, "cpuset.mems"));
      }
      return cg;
    } catch (err) {
      await cg.destroy().catch(() => undefined);
      throw err;
    }
  }

  private async make(
    bases: Partial<Record<V1Controller, string>>,
    c: V1Controller,
    parent: string,
    id: string,
  ): Promise<string> {
    const dir = path.join(bases[c]!, parent, id);
    this.dirs[c] = dir;
    // Left by an earlier start of this task whose end no agent saw: whatever still runs in it is
    // a stale copy (a live one would have been recovered instead of started), never a second one.
    if (!(await mkdirOwn(dir))) await killAll(dir);
    return dir;
  }

  async addPid(pid: number): Promise<void> {
    for (const dir of Object.values(this.dirs)) await writeControl(dir, "cgroup.procs", String(pid));
  }

  async oomKilled(): Promise<boolean> {
    const mem = this.dirs.memory;
    return mem !== undefined && (await readKeyed(mem, "memory.oom_control", "oom_kill")) > 0;
  }

  usage(): Promise<CgroupUsage> {
    return v1Usage(this.dirs);
  }

  async destroy(): Promise<void> {
    // memory last: its OOM record is what oomKilled() reads, and it holds the processes' charges.
    for (const c of ["cpuset", "cpu", "memory"] as const) {
      const dir = this.dirs[c];
      if (dir !== undefined) await killAndRemove(dir);
    }
  }
}

async function copyCpuset(from: string, to: string): Promise<void> {
  await writeControl(to, "cpuset.cpus", await readControl(from, "cpuset.cpus"));
  await writeControl(to, "cpuset.mems", await readControl(from, "cpuset.mems"));
}
