/**
 * Wait/stop/recover for drivers whose tasks are plain host processes, each started detached (its
 * own session and process group, so it outlives the agent) under a tiny shell parent that writes
 * the task's exit status to `statusFile`. A process this agent spawned is watched through its
 * ChildProcess; a recovered one (after an agent restart) is polled through /proc and its status is
 * read from the file once it is gone.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import { sleep } from "../../../internal/abort.js";
import type { ExitResult, TaskHandle } from "../driver.js";
import { isSameLiveProcess, readProcStat, resultFromStatus, signalGroup, statusFromSignal } from "./proc.js";

/** The statement a shell parent runs after the task: record `$1`'s status, exit with it. */
export const RECORD_STATUS_SH = `printf '%s\\n' "$__berth_status" > "$__berth_status_file"
exit "$__berth_status"`;

export class ProcessTable {
  private readonly exits = new Map<string, Promise<ExitResult>>();
  private readonly children = new Map<string, ChildProcess>();
  private readonly detached = new AbortController();

  constructor(
    private readonly driverName: string,
    private readonly pollMs = 200,
  ) {}

  /**
   * Builds the handle for a freshly spawned child and starts watching it. Call it right after the
   * child's 'spawn' event (before yielding to I/O) so its exit event cannot be missed.
   */
  async adopt(child: ChildProcess, statusFile: string, extra: TaskHandle["state"] = {}): Promise<TaskHandle> {
    const pid = child.pid;
    if (pid === undefined) throw new Error("process did not start");
    const exited = new Promise<ExitResult>((resolve) => {
      child.once("exit", (code, signal) => {
        resolve(this.resultAfterExit(statusFile, code, signal));
      });
    });
    const startTime = (await readProcStat(pid))?.startTime ?? "";
    const handle: TaskHandle = {
      driver: this.driverName,
      pid,
      startedAt: Date.now(),
      state: { ...extra, startTime, statusFile },
    };
    this.exits.set(key(handle), exited);
    this.children.set(key(handle), child);
    void exited.then(() => this.children.delete(key(handle)));
    return handle;
  }

  /**
   * Resolves with the task's outcome. Drivers unref their children so a running task never holds
   * the agent open; a pending wait() does (ref), since someone is waiting for that exit.
   */
  wait(handle: TaskHandle): Promise<ExitResult> {
    const k = key(handle);
    if (!this.detached.signal.aborted) this.children.get(k)?.ref();
    let p = this.exits.get(k);
    if (!p) {
      p = this.pollUntilGone(handle);
      this.exits.set(k, p);
    }
    return p;
  }

  async recover(handle: TaskHandle): Promise<boolean> {
    const startTime = handle.state.startTime;
    if (typeof startTime !== "string" || startTime === "") return false;
    return isSameLiveProcess(handle.pid, startTime);
  }

  /** SIGTERM to the group, SIGKILL after killTimeoutMs; then any stragglers in the group. */
  async stop(handle: TaskHandle, killTimeoutMs: number): Promise<void> {
    const exited = this.wait(handle);
    if (!(await this.recover(handle))) {
      await exited;
      return;
    }
    signalGroup(handle.pid, "SIGTERM");
    const ac = new AbortController();
    const timedOut = await Promise.race([
      exited.then(() => false),
      sleep(Math.max(0, killTimeoutMs), ac.signal).then(
        () => true,
        () => false,
      ),
    ]);
    ac.abort();
    if (timedOut) signalGroup(handle.pid, "SIGKILL");
    await exited;
    // The task's own children may linger in its group after the shell parent is gone.
    signalGroup(handle.pid, "SIGKILL");
  }

  /** See TaskDriver.detach: unrefs every child and ends the /proc polls (their waits never settle). */
  detach(): void {
    this.detached.abort();
    for (const child of this.children.values()) child.unref();
  }

  /** Forgets a finished task (its exit result stays available until then). */
  forget(handle: TaskHandle): void {
    this.exits.delete(key(handle));
    this.children.delete(key(handle));
  }

  private async pollUntilGone(handle: TaskHandle): Promise<ExitResult> {
    const startTime = String(handle.state.startTime ?? "");
    const signal = this.detached.signal;
    while (startTime !== "" && (await isSameLiveProcess(handle.pid, startTime))) {
      // Detached: an exit is no longer ours to report; a promise that never settles holds nothing.
      if (signal.aborted) return new Promise<never>(() => undefined);
      await sleep(this.pollMs, signal).catch(() => undefined);
    }
    const status = await readStatusFile(String(handle.state.statusFile ?? ""));
    if (status === null) {
      return {
        exitCode: -1,
        signal: null,
        error: `task process ${handle.pid} exited without recording an exit status`,
      };
    }
    return resultFromStatus(status);
  }

  private async resultAfterExit(
    statusFile: string,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<ExitResult> {
    const recorded = await readStatusFile(statusFile);
    if (recorded !== null) return resultFromStatus(recorded);
    if (signal !== null) return { exitCode: statusFromSignal(signal), signal };
    return resultFromStatus(code ?? -1);
  }
}

function key(h: TaskHandle): string {
  return `${h.pid}:${String(h.state.startTime ?? "")}`;
}

async function readStatusFile(file: string): Promise<number | null> {
  if (file === "") return null;
  try {
    const text = (await fs.readFile(file, "utf8")).trim();
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}
