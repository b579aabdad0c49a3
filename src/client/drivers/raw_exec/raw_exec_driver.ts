/**
 * raw_exec: runs the task's command directly on the host, unisolated, with the task dir as its
 * working directory. It cannot bind volumes, so it refuses mounts (the scheduler and volume_hook
 * read `supportsMounts` and say so first; this is the last line).
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import { BerthError } from "../../../structs/errors.js";
import type { DriverInfo } from "../../../structs/node.js";
import type { DriverCapabilities, ExitResult, TaskDriver, TaskHandle, TaskStartConfig } from "../driver.js";
import { openLogs, statusFileFor, withDefaultPath } from "../shared/launch.js";
import { ProcessTable, RECORD_STATUS_SH } from "../shared/process_table.js";

/**
 * The shell parent: $1 is the status file, the rest is the command. It ignores nothing the task
 * needs (a trap with an action is reset to default in the child) and survives the SIGTERM that
 * stop() sends to the whole group long enough to record the task's status.
 */
const RAW_EXEC_PARENT_SH = `__berth_status_file=$1
shift
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

  async start(cfg: TaskStartConfig): Promise<TaskHandle> {
    if (cfg.mounts.length > 0) {
      throw new BerthError(
        "ERR_DRIVER",
        `task ${JSON.stringify(cfg.taskName)}: driver raw_exec does not support volume mounts; use the exec driver`,
      );
    }
    if (cfg.command === "")
      throw new BerthError("ERR_DRIVER", `task ${JSON.stringify(cfg.taskName)}: command is empty`);
    const statusFile = statusFileFor(cfg.taskDir);
    await fs.rm(statusFile, { force: true });
    const logs = await openLogs(cfg.stdoutPath, cfg.stderrPath);
    try {
      const child = spawn("/bin/sh", ["-c", RAW_EXEC_PARENT_SH, "sh", statusFile, cfg.command, ...cfg.args], {
        cwd: cfg.taskDir,
        env: withDefaultPath(cfg.env),
        detached: true,
        stdio: ["ignore", logs[0]!.fd, logs[1]!.fd],
      });
      const spawned = new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
      // 'spawn' is emitted on the next tick, before libuv can report an exit, so watching the
      // child right after it cannot miss the exit event.
      await spawned;
      child.unref();
      return await this.procs.adopt(child, statusFile);
    } finally {
      await Promise.all(logs.map((l) => l.close()));
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

  detach(): void {
    this.procs.detach();
  }
}
