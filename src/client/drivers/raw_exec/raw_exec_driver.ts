/**
 * raw_exec: runs the task's command directly on the host, unisolated, with the task dir as its
 * working directory. It cannot bind volumes, so it refuses mounts (the scheduler and volume_hook
 * read `supportsMounts` and say so first; this is the last line).
 *
 * A task runs as the agent's user (root), so the driver can be disabled, as Nomad ships it: a
 * disabled driver fingerprints as not detected ("disabled"), so the scheduler places no raw_exec
 * task on the node ("missing drivers"), and start() refuses. Tasks already running when the agent
 * restarts with the driver disabled are still recovered and stopped normally (as Nomad's driver
 * only refuses StartTask), so they are never orphaned.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs/promises";
import { BerthError } from "../../../structs/errors.js";
import type { DriverInfo } from "../../../structs/node.js";
import type {
  BeforeRun,
  DriverCapabilities,
  ExitResult,
  TaskDriver,
  TaskHandle,
  TaskStartConfig,
  TaskUsageSample,
} from "../driver.js";
import type { CgroupManager } from "../shared/cgroups/manager.js";
import { openLogs, statusFileFor, withDefaultPath } from "../shared/launch.js";
import { findTool } from "../shared/proc.js";
import { PARENT_TRAPS_SH, ProcessTable, RECORD_STATUS_SH } from "../shared/process_table.js";
import { AWAIT_GO_SH, startedFileFor } from "../shared/start_gate.js";
import { type PreparedStart, TaskIsolation } from "../shared/task_isolation.js";
import { hostTaskUsage } from "../shared/host_usage.js";

/**
 * The shell parent: $1 is the status file, $2 the started file, the rest is the command. It waits
 * for the agent's go (start_gate.ts) before it runs anything. It ignores nothing the task needs (a
 * trap with an action is reset to default in the child) and survives the SIGTERM that stop() sends
 * to the whole group long enough to record the task's status.
 */
const RAW_EXEC_PARENT_SH = `__berth_status_file=$1
__berth_started_file=$2
shift 2
${AWAIT_GO_SH}
${PARENT_TRAPS_SH}
"$@"
__berth_status=$?
${RECORD_STATUS_SH}`;

export class RawExecDriver implements TaskDriver {
  readonly name = "raw_exec";
  private readonly procs: ProcessTable;
  private readonly isolation: TaskIsolation;
  private readonly enabled: boolean;

  /**
   * `cgroups`: where tasks with resources get their cgroup (default: the host's; null: never).
   * `enabled`: the agent's client always says (from the agent config, default off); the default
   * here serves the driver's own tests.
   */
  constructor(opts: { pollMs?: number; cgroups?: CgroupManager | null; enabled?: boolean } = {}) {
    this.enabled = opts.enabled ?? true;
    this.isolation = new TaskIsolation(opts.cgroups);
    this.procs = new ProcessTable(this.name, opts.pollMs, this.isolation.onExit);
  }

  capabilities(): DriverCapabilities {
    return { supportsMounts: false };
  }

  async fingerprint(): Promise<DriverInfo> {
    if (!this.enabled)
      return { Detected: false, Healthy: false, HealthDescription: "disabled", SupportsMounts: false };
    return { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: false };
  }

  async start(cfg: TaskStartConfig, beforeRun?: BeforeRun): Promise<TaskHandle> {
    // Nomad's errDisabledDriver; reached only by an alloc placed before the driver was disabled.
    if (!this.enabled) throw new BerthError("ERR_DRIVER", "raw_exec is disabled");
    if (cfg.mounts.length > 0) {
      throw new BerthError(
        "ERR_DRIVER",
        `task ${JSON.stringify(cfg.taskName)}: driver raw_exec does not support volume mounts; use the exec driver`,
      );
    }
    if (cfg.command === "")
      throw new BerthError("ERR_DRIVER", `task ${JSON.stringify(cfg.taskName)}: command is empty`);
    const files = { statusFile: statusFileFor(cfg.taskDir), startedFile: startedFileFor(cfg.taskDir) };
    await fs.rm(files.statusFile, { force: true });
    await fs.rm(files.startedFile, { force: true });
    const command = await asUser(cfg);
    const prepared = await this.isolation.prepare(cfg);
    let logs: fs.FileHandle[] = [];
    let child: ChildProcess;
    let handle: TaskHandle;
    try {
      logs = await openLogs(cfg.stdoutPath, cfg.stderrPath);
      const argv = [
        files.statusFile,
        files.startedFile,
        ...userCommand(prepared, command),
        cfg.command,
        ...cfg.args,
      ];
      child = spawn("/bin/sh", ["-c", RAW_EXEC_PARENT_SH, "sh", ...argv], {
        cwd: cfg.taskDir,
        env: withDefaultPath(cfg.env),
        detached: true,
        // stdin is the start gate: the parent reads "go" from it, then gives the task /dev/null.
        stdio: ["pipe", logs[0]!.fd, logs[1]!.fd],
      });
      const spawned = new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
      // 'spawn' is emitted on the next tick, before libuv can report an exit, so watching the
      // child right after it cannot miss the exit event.
      await spawned;
      child.unref();
      handle = await this.procs.adopt(child, files, prepared.state);
    } catch (err) {
      await this.isolation.discard(prepared);
      throw err;
    } finally {
      await Promise.all(logs.map((l) => l.close()));
    }
    await this.enterCgroup(prepared, cfg.taskName, child, handle);
    await this.procs.release(child, handle, cfg.taskName, beforeRun);
    return handle;
  }

  /** Moves the held parent into the task's cgroup; on failure it is killed (it never ran). */
  private async enterCgroup(
    p: PreparedStart,
    task: string,
    child: ChildProcess,
    handle: TaskHandle,
  ): Promise<void> {
    try {
      await this.isolation.enter(p, task, handle.pid);
    } catch (err) {
      child.stdin?.destroy();
      await this.procs.wait(handle);
      this.procs.forget(handle);
      throw err;
    }
  }

  wait(handle: TaskHandle): Promise<ExitResult> {
    return this.procs.wait(handle);
  }

  stop(handle: TaskHandle, killTimeoutMs: number): Promise<void> {
    return this.procs.stop(handle, killTimeoutMs);
  }

  recover(handle: TaskHandle): Promise<boolean> {
    return this.procs.recover(handle);
  }

  stats(handle: TaskHandle): Promise<TaskUsageSample> {
    return hostTaskUsage(handle);
  }

  detach(): void {
    this.procs.detach();
  }
}

/** setpriv's path when the task runs as a user (checked before anything is created), else null. */
async function asUser(cfg: TaskStartConfig): Promise<string | null> {
  if (!cfg.user) return null;
  const setpriv = await findTool("setpriv");
  if (setpriv === null) {
    throw new BerthError(
      "ERR_DRIVER",
      `task ${JSON.stringify(cfg.taskName)}: raw_exec needs setpriv (util-linux) to run as user ${JSON.stringify(cfg.user)}`,
    );
  }
  return setpriv;
}

/** The prefix that drops the task's command to its user (uid, gid, supplementary groups). */
function userCommand(p: PreparedStart, setpriv: string | null): string[] {
  if (!p.user || setpriv === null) return [];
  const { uid, gid, groups } = p.user;
  return [setpriv, `--reuid=${uid}`, `--regid=${gid}`, `--groups=${groups.join(",")}`, "--"];
}
