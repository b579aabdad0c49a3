/**
 * A task's cgroup on a v2 (unified) host: `<agent's cgroup>/<parent>/<id>.scope`, written as
 * Nomad's executor writes it (configureCG2): memory.max = the hard limit or "max", memory.low =
 * the soft limit (0: none), memory.swap.max = 0 (no swap; where the kernel offers it),
 * cpu.weight converted from the shares, cpuset.cpus for a task pinned to cores.
 *
 * Controllers must be enabled top-down in cgroup.subtree_control, and v2 lets no cgroup other than
 * the root both hold processes and enable controllers for its children. When the agent's own
 * cgroup refuses (EBUSY: the agent sits in it), the agent moves itself into a leaf
 * `<agent's cgroup>/berth-agent` and tries again; other processes sharing its cgroup make that fail
 * too, with the kernel's error.
 *
 * OOM kills: the `oom_kill` counter of memory.events.
 */
import fs from "node:fs/promises";
import path from "node:path";
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
import { v2Usage } from "./usage.js";

export class V2Cgroup implements TaskCgroup {
  constructor(readonly dir: string) {}

  get state(): string {
    return JSON.stringify({ mode: "v2", dir: this.dir });
  }

  static async create(
    base: string,
    parent: string,
    id: string,
    limits: CgroupLimits,
    cpus: string | null,
  ): Promise<V2Cgroup> {
    const wanted = cpus === null ? ["memory", "cpu"] : ["memory", "cpu", "cpuset"];
    await enableControllers(base, wanted, true);
    const parentDir = path.join(base, parent);
    await mkdirOwn(parentDir);
    await enableControllers(parentDir, wanted, false);
    const cg = new V2Cgroup(path.join(parentDir, `${id}.scope`));
    try {
      // A leftover of an earlier start: its processes are stale copies (see V1Cgroup.make).
      if (!(await mkdirOwn(cg.dir))) await killAll(cg.dir);
      await writeControl(
        cg.dir,
        "memory.max",
        limits.memoryHardBytes === null ? "max" : String(limits.memoryHardBytes),
      );
      // Written even when 0 (none): a reused cgroup may hold an old value.
      await writeControl(cg.dir, "memory.low", String(limits.memorySoftBytes));
      await writeIfPresent(cg.dir, "memory.swap.max", "0");
      await writeControl(cg.dir, "cpu.weight", String(limits.cpuWeight));
      if (cpus !== null) await writeControl(cg.dir, "cpuset.cpus", cpus);
      else await writeIfPresent(cg.dir, "cpuset.cpus", "").catch(() => false);
      return cg;
    } catch (err) {
      await cg.destroy().catch(() => undefined);
      throw err;
    }
  }

  async addPid(pid: number): Promise<void> {
    await writeControl(this.dir, "cgroup.procs", String(pid));
  }

  async oomKilled(): Promise<boolean> {
    return (await readKeyed(this.dir, "memory.events", "oom_kill")) > 0;
  }

  usage(): Promise<CgroupUsage> {
    return v2Usage(this.dir);
  }

  async destroy(): Promise<void> {
    // cgroup.kill (Linux 5.14+) kills the whole cgroup at once; killAndRemove finishes the job.
    await writeIfPresent(this.dir, "cgroup.kill", "1").catch(() => false);
    await killAndRemove(this.dir);
  }
}

/**
 * Enables `wanted` for the children of `dir` (those its cgroup.controllers offers; all of them on
 * a tree without that file, as in tests). `isAgentCgroup`: see the module comment on EBUSY.
 */
async function enableControllers(dir: string, wanted: string[], isAgentCgroup: boolean): Promise<void> {
  const offered = await readControl(dir, "cgroup.controllers").then(
    (t) => t.split(/\s+/),
    () => null,
  );
  const enabled = (await readControl(dir, "cgroup.subtree_control").catch(() => "")).split(/\s+/);
  const missing = wanted.filter((c) => !enabled.includes(c) && (offered === null || offered.includes(c)));
  if (offered !== null && !offered.includes("memory")) {
    throw new Error(`cgroup ${dir} does not offer the memory controller`);
  }
  if (missing.length === 0) return;
  const value = missing.map((c) => `+${c}`).join(" ");
  try {
    await writeControl(dir, "cgroup.subtree_control", value);
  } catch (err) {
    if (!isAgentCgroup || (err as NodeJS.ErrnoException).code !== "EBUSY") throw err;
    const leaf = path.join(dir, "berth-agent");
    await fs.mkdir(leaf, { recursive: true });
    await writeControl(leaf, "cgroup.procs", String(process.pid));
    await writeControl(dir, "cgroup.subtree_control", value);
  }
}
