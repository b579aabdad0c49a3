/**
 * exec: runs a task in its own mount namespace, chrooted into its task dir, with read-only host
 * system dirs, /dev (minimal, or the host's for privileged tasks), /proc, /sys (read-only), the alloc dir at /alloc, berth's own installation, and the task's
 * volume mounts (see mount_plan.ts and init_script.ts). Nothing mounted for the task shows on the
 * host except through a bidirectional mount, whose host side is already a shared mount.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { BerthError } from "../../../structs/errors.js";
import type { DriverInfo } from "../../../structs/node.js";
import type {
  BeforeRun,
  DriverCapabilities,
  ExitResult,
  TaskDriver,
  TaskHandle,
  TaskMount,
  TaskStartConfig,
  TaskUsageSample,
} from "../driver.js";
import type { CgroupManager } from "../shared/cgroups/manager.js";
import { findTool, signalGroup } from "../shared/proc.js";
import { openLogs, statusFileFor, withDefaultPath } from "../shared/launch.js";
import { rootSafeEnv } from "../shared/root_env.js";
import { ProcessTable } from "../shared/process_table.js";
import { startedFileFor } from "../shared/start_gate.js";
import { TaskIsolation } from "../shared/task_isolation.js";
import { hostTaskUsage } from "../shared/host_usage.js";
import { EXEC_INIT_SH } from "./init_script.js";
import { buildMountPlan, checkHostPath, premakeMountPoints, validateTaskPath } from "./mount_plan.js";
import { refreshInTaskNamespace } from "./mount_refresh.js";
import { mountHolding } from "../../../internal/mountinfo.js";

const REQUIRED_TOOLS = ["unshare", "chroot", "mount", "findmnt", "readlink", "mkdir", "cp", "ln"];

/**
 * The user an exec task runs as: the task's `user`, else `nobody` (as Nomad's exec driver), so a
 * job that says nothing gets no root on the node. A privileged task (a CSI plugin) that names no
 * user keeps the agent's user: it mounts and formats volumes, which needs root, as CSI requires.
 */
export const EXEC_DEFAULT_USER = "nobody";

function execDefaultUser(privileged: boolean): string {
  return privileged ? "" : EXEC_DEFAULT_USER;
}

export class ExecDriver implements TaskDriver {
  readonly name = "exec";
  private readonly procs: ProcessTable;
  private readonly isolation: TaskIsolation;

  private readonly setupTimeoutMs: number;

  /**
   * `setupTimeoutMs`: how long the namespace/mount setup may take before the start fails (60 s).
   * `cgroups`: where tasks with resources get their cgroup (default: the host's; null: never).
   */
  constructor(opts: { pollMs?: number; setupTimeoutMs?: number; cgroups?: CgroupManager | null } = {}) {
    this.isolation = new TaskIsolation(opts.cgroups);
    this.procs = new ProcessTable(this.name, opts.pollMs, this.isolation.onExit);
    this.setupTimeoutMs = opts.setupTimeoutMs ?? 60_000;
  }

  defaultUser(privileged: boolean): string {
    return execDefaultUser(privileged);
  }

  capabilities(): DriverCapabilities {
    return { supportsMounts: true };
  }

  async fingerprint(): Promise<DriverInfo> {
    const info = (healthy: boolean, why: string): DriverInfo => ({
      Detected: healthy,
      Healthy: healthy,
      HealthDescription: why,
      SupportsMounts: true,
    });
    if (process.platform !== "linux") return info(false, "exec driver requires Linux");
    if (process.getuid?.() !== 0) return info(false, "exec driver must run as root");
    const missing: string[] = [];
    for (const t of REQUIRED_TOOLS) if ((await findTool(t)) === null) missing.push(t);
    if (missing.length > 0) return info(false, `exec driver needs ${missing.join(", ")}`);
    return info(true, "Healthy");
  }

  async start(cfg: TaskStartConfig, beforeRun?: BeforeRun): Promise<TaskHandle> {
    const task = JSON.stringify(cfg.taskName);
    if (cfg.command === "") throw new BerthError("ERR_DRIVER", `task ${task}: command is empty`);
    const unshare = await findTool("unshare");
    if (unshare === null) throw new BerthError("ERR_DRIVER", "exec driver: unshare not found");
    const root = checkHostPath("task dir", await fs.realpath(cfg.taskDir));
    const plan = await buildMountPlan(cfg, root);
    await premakeMountPoints(root, plan);
    const files = { statusFile: statusFileFor(root), startedFile: startedFileFor(root) };
    await fs.rm(files.statusFile, { force: true });
    await fs.rm(files.startedFile, { force: true });
    const user0 = cfg.user || execDefaultUser(cfg.privileged ?? false);
    const prepared = await this.isolation.prepare({ ...cfg, user: user0 });
    const user = prepared.user;

    const args = ["--mount", "--propagation", "unchanged", "--", "/bin/sh", "-c", EXEC_INIT_SH, "sh"];
    args.push(root, files.statusFile, files.startedFile, String(plan.length));
    args.push(user ? `${user.uid}:${user.gid}` : "", user ? user.groups.join(",") : "");
    args.push(checkHostPath("the mount holding the task dir", await mountHolding(root)));
    for (const e of plan) args.push(e.kind, e.source, e.dest, e.readOnly ? "ro" : "rw");
    // unshare and the setup shell run as root: the job's LD_* and the like reach only the command,
    // through `env` in the task's root, after the drop to the task's user (root_env.ts).
    const { safe, carried } = rootSafeEnv(withDefaultPath(cfg.env));
    if (carried.length > 0) args.push("env", "--", ...carried);
    args.push(cfg.command, ...cfg.args);

    let logs: fs.FileHandle[] = [];
    let handle: TaskHandle;
    let child: ChildProcess;
    let report: Promise<string>;
    try {
      logs = await openLogs(cfg.stdoutPath, cfg.stderrPath);
      child = spawn(unshare, args, {
        cwd: root,
        env: safe,
        detached: true,
        // stdin is the start gate (start_gate.ts), fd 3 the setup channel; the script closes both
        // before the task runs, so the task holds no pipe to the agent and survives its restart.
        stdio: ["pipe", logs[0]!.fd, logs[1]!.fd, "pipe"],
      });
      // Read the setup channel from this very tick: when a short task exits, Node flushes (and
      // discards) stdio streams nobody listens to yet, and the report — and its end — would be
      // lost while we await below, leaving the start hanging forever.
      report = readAll(child.stdio[3] as Readable | null, this.setupTimeoutMs);
      report.catch(() => undefined);
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
      // The task root travels in the handle, so a recovered handle can refresh mounts too.
      handle = await this.procs.adopt(child, files, { taskRoot: root, ...prepared.state });
    } catch (err) {
      await this.isolation.discard(prepared);
      throw err;
    } finally {
      await Promise.all(logs.map((l) => l.close()));
    }
    let setup: string;
    try {
      // Into the cgroup at once: the setup's own mounts are charged to the task, and it is held
      // before its command anyway (the command only runs after "go").
      await this.isolation.enter(prepared, cfg.taskName, handle.pid);
      setup = await report;
    } catch (err) {
      // Setup is a handful of mount calls; one that never finishes must not hang the task runner
      // forever: kill the whole attempt and let the restart policy decide.
      signalGroup(handle.pid, "SIGKILL");
      await this.procs.wait(handle);
      this.procs.forget(handle);
      throw new BerthError("ERR_DRIVER", `task ${task}: exec driver setup failed: ${(err as Error).message}`);
    }
    if (setup.trim() !== "ok") {
      // Still referenced, so the event loop stays up until the failed setup's exit is seen.
      const result = await this.procs.wait(handle);
      this.procs.forget(handle);
      const detail = setup.trim() || `setup exited with status ${result.exitCode}; see ${cfg.stderrPath}`;
      throw new BerthError("ERR_DRIVER", `task ${task}: exec driver setup failed: ${detail}`);
    }
    // The task must not keep the agent's event loop alive (the agent may exit and recover it).
    child.unref();
    await this.procs.release(child, handle, cfg.taskName, beforeRun);
    return handle;
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

  /** See TaskDriver.refreshMount and mount_refresh.ts. */
  async refreshMount(handle: TaskHandle, mount: TaskMount): Promise<void> {
    const root = handle.state.taskRoot;
    if (typeof root !== "string" || root === "") {
      throw new BerthError(
        "ERR_DRIVER",
        `exec driver: cannot refresh the mount at ${mount.taskPath}: the task's handle records no task root (the task was started by an older berth)`,
      );
    }
    const task = path.basename(root);
    checkHostPath("task dir", root);
    validateTaskPath(task, mount.taskPath);
    checkHostPath(`task ${JSON.stringify(task)}: mount source`, mount.hostPath);
    if (!(await this.procs.recover(handle))) {
      throw new BerthError(
        "ERR_DRIVER",
        `exec driver: cannot refresh the mount at ${mount.taskPath}: task process ${handle.pid} is not running`,
      );
    }
    await refreshInTaskNamespace({ pid: handle.pid, root, mount, timeoutMs: this.setupTimeoutMs });
  }
}

/**
 * The whole of `stream` once it ends or closes, or a rejection when neither happens within
 * `timeoutMs` (then the stream is destroyed).
 */
function readAll(stream: Readable | null | undefined, timeoutMs: number): Promise<string> {
  if (!stream) return Promise.reject(new Error("no setup channel"));
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`setup did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve(text);
    };
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (text += chunk));
    stream.once("end", done);
    stream.once("close", done);
    stream.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
