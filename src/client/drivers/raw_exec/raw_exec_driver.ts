/**
 * raw_exec: runs the task's command directly on the host, unisolated, with the task dir as its
 * working directory. It cannot bind volumes, so it refuses mounts (the scheduler and volume_hook
 * read `supportsMounts` and say so first; this is the last line).
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
} from "../driver.js";
import { openLogs, statusFileFor, withDefaultPath } from "../shared/launch.js";
import { ProcessTable, RECORD_STATUS_SH } from "../shared/process_table.js";
import { AWAIT_GO_SH, startedFileFor } from "../shared/start_gate.js";

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
trap ':' TERM INT HUP
"$@"
__berth_status=$?
${RECORD_STATUS_SH}`;

export class RawExecDriver implements TaskDriver {
  readonly name = "raw_exec";
  private readonly procs: ProcessTable;

  constructor(opts: { pollMs?: number } = {}) {
    this.procs = new ProcessTable(this.name, opts.pollMs);
  }

  capabilities(): DriverCapabilities {
    return { supportsMounts: false };
  }

  async fingerprint(): Promise<DriverInfo> {
    return { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: false };
  }

  async start(cfg: TaskStartConfig, beforeRun?: BeforeRun): Promise<TaskHandle> {
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
    const logs = await openLogs(cfg.stdoutPath, cfg.stderrPath);
    let child: ChildProcess;
    let handle: TaskHandle;
    try {
      const argv = [files.statusFile, files.startedFile, cfg.command, ...cfg.args];
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
      handle = await this.procs.adopt(child, files);
    } finally {
      await Promise.all(logs.map((l) => l.close()));
    }
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

  detach(): void {
    this.procs.detach();
  }
}
