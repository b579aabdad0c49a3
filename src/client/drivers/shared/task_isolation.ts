/**
 * What the process drivers (exec, raw_exec) do around a task's process besides spawning it: check
 * its kill signal, look up its user, give it a cgroup holding its resources, and release that
 * cgroup when the task is gone.
 *
 * Order, so that no part of the task ever runs outside its limits: the cgroup is created and
 * written BEFORE the process is spawned; the spawned process is held at the start gate
 * (start_gate.ts) and moved into the cgroup (enter) before the driver says "go", so the task's
 * command and everything it forks start inside. The cgroup's paths travel in the task's handle
 * (`cgroup`), so an agent restarted while the task runs finds it again; the exit seen by whichever
 * agent watches the task reads its OOM record and removes it (onExit).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { BerthError } from "../../../structs/errors.js";
import { type KillSignal, parseKillSignal } from "../../../structs/kill_signal.js";
import type { ExitResult, TaskHandle, TaskStartConfig } from "../driver.js";
import { CgroupManager, cgroupFromState, type TaskCgroup } from "./cgroups/manager.js";
import { cgroupLimits } from "./cgroups/limits.js";
import { lookupUser, type TaskUser } from "./user.js";

export interface PreparedStart {
  cgroup: TaskCgroup | null;
  user: TaskUser | null;
  killSignal: KillSignal;
  /** Entries for the task's handle state. */
  state: TaskHandle["state"];
}

/**
 * The task's own writable directories (local, secrets, tmp) belong to its user, so a task that
 * does not run as root can write where its files go (Nomad makes them world-writable and owned by
 * nobody instead). Links are never followed: a directory the task replaced with a link is skipped.
 */
async function giveTaskDirs(taskDir: string, user: TaskUser): Promise<void> {
  for (const name of ["local", "secrets", "tmp"]) {
    const dir = path.join(taskDir, name);
    const st = await fs.lstat(dir).catch(() => null);
    if (st?.isDirectory()) await fs.lchown(dir, user.uid, user.gid);
  }
}

export class TaskIsolation {
  /** `cgroups` null: tasks never get a cgroup (tests of other parts; hosts that opt out). */
  constructor(private readonly cgroups: CgroupManager | null = new CgroupManager()) {}

  /** Everything a start needs before its process is spawned; throws a clear error, creating nothing. */
  async prepare(cfg: TaskStartConfig): Promise<PreparedStart> {
    const task = JSON.stringify(cfg.taskName);
    let killSignal: KillSignal;
    try {
      killSignal = parseKillSignal(cfg.killSignal);
    } catch (err) {
      throw new BerthError("ERR_VALIDATION", `task ${task}: ${(err as Error).message}`, {
        field: "KillSignal",
      });
    }
    const user = cfg.user ? await lookupUser(cfg.taskName, cfg.user) : null;
    if (user) await giveTaskDirs(cfg.taskDir, user);
    let cgroup: TaskCgroup | null = null;
    if (cfg.resources && this.cgroups) {
      try {
        cgroup = await this.cgroups.create(cfg.allocId, cfg.taskName, cgroupLimits(cfg.resources));
      } catch (err) {
        throw new BerthError(
          "ERR_DRIVER",
          `task ${task}: cannot set up its cgroup: ${(err as Error).message}`,
        );
      }
    }
    return { cgroup, user, killSignal, state: { killSignal, cgroup: cgroup?.state ?? "" } };
  }

  /** Moves the held task process into its cgroup (before "go"). */
  async enter(p: PreparedStart, taskName: string, pid: number): Promise<void> {
    if (!p.cgroup) return;
    try {
      await p.cgroup.addPid(pid);
    } catch (err) {
      throw new BerthError(
        "ERR_DRIVER",
        `task ${JSON.stringify(taskName)}: cannot move its process into its cgroup: ${(err as Error).message}`,
      );
    }
  }

  /** A start that failed before any process was adopted: removes its cgroup. */
  async discard(p: PreparedStart): Promise<void> {
    await p.cgroup?.destroy().catch(() => undefined);
  }

  /** ProcessTable's OnExit: the OOM record, then the cgroup (and any straggler in it) goes. */
  readonly onExit = async (handle: TaskHandle, result: ExitResult): Promise<ExitResult> => {
    const cg = cgroupFromState(handle.state.cgroup);
    if (!cg) return result;
    const oom = await cg.oomKilled().catch(() => false);
    await cg.destroy().catch(() => undefined);
    return oom ? { ...result, oomKilled: true } : result;
  };
}
