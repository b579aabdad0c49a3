/**
 * Wait/stop/recover for drivers whose tasks are plain host processes, each started detached (its
 * own session and process group, so it outlives the agent) under a tiny shell parent that writes
 * the task's exit status to `statusFile`. A process this agent spawned is watched through its
 * ChildProcess; a recovered one (after an agent restart) is polled through /proc and its status is
 * read from the file once it is gone. The parent is spawned held and released by `release` once
 * its handle is persisted (start_gate.ts); `startedFile` tells whether it ever ran the command.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import { sleep } from "../../../internal/abort.js";
import type { BeforeRun, ExitResult, TaskHandle } from "../driver.js";
import { parseKillSignal } from "../../../structs/kill_signal.js";
import { isSameLiveProcess, readProcStat, resultFromStatus, signalGroup, statusFromSignal } from "./proc.js";
import { ranCommand, sayGo, testPause } from "./start_gate.js";

/** The files beside the task dir its shell parent writes (see statusFileFor, startedFileFor). */
export interface ParentFiles {
  statusFile: string;
  startedFile: string;
}

/** How long recover() waits for a held process it killed to be gone before giving up. */
const KILL_HELD_TIMEOUT_MS = 10_000;

/**
 * The shell parent's traps: it must outlive any kill signal a task may be given (structs/
 * kill_signal.ts; stop() signals the whole group) long enough to record the task's status. A trap
 * with an action is reset to the default in the child, so the task itself sees normal dispositions.
 */
export const PARENT_TRAPS_SH = "trap ':' HUP INT QUIT ABRT USR1 USR2 PIPE ALRM TERM";

/**
 * Called once per exit of a task, seen live or after a recovery, before anyone waiting learns it:
 * the driver adds what it knows (an OOM kill) and releases the task's resources (its cgroup).
 */
export type OnExit = (handle: TaskHandle, result: ExitResult) => Promise<ExitResult>;

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
    private readonly onExit: OnExit = async (_h, r) => r,
  ) {}

  /**
   * Builds the handle for a freshly spawned child and starts watching it. Call it right after the
   * child's 'spawn' event (before yielding to I/O) so its exit event cannot be missed.
   */
  async adopt(child: ChildProcess, files: ParentFiles, extra: TaskHandle["state"] = {}): Promise<TaskHandle> {
    const pid = child.pid;
    if (pid === undefined) throw new Error("process did not start");
    const exited = new Promise<ExitResult>((resolve) => {
      child.once("exit", (code, signal) => {
        resolve(this.resultAfterExit(files, pid, code, signal));
      });
    });
    const startTime = (await readProcStat(pid))?.startTime ?? "";
    const handle: TaskHandle = {
      driver: this.driverName,
      pid,
      startedAt: Date.now(),
      state: { ...extra, startTime, statusFile: files.statusFile, startedFile: files.startedFile },
    };
    const finished = exited.then((r) => this.finish(handle, r));
    this.exits.set(key(handle), finished);
    this.children.set(key(handle), child);
    void finished.then(() => this.children.delete(key(handle)));
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
      p = this.pollUntilGone(handle).then((r) => this.finish(handle, r));
      this.exits.set(k, p);
    }
    return p;
  }

  /**
   * Lets a held child (spawned with its stdin a pipe, adopted) run its command, in the order that
   * makes the start idempotent across a crash: `beforeRun` (the caller persists the handle), then
   * "go". When `beforeRun` throws, the held process is killed (it never ran) and the error thrown.
   */
  async release(
    child: ChildProcess,
    handle: TaskHandle,
    taskName: string,
    beforeRun?: BeforeRun,
  ): Promise<void> {
    // The held parent may die first (killed, failed setup): the gate's socket then errs harmlessly.
    child.stdin?.on("error", () => undefined);
    await testPause("before-persist", taskName);
    try {
      await beforeRun?.(handle);
    } catch (err) {
      child.stdin?.destroy();
      signalGroup(handle.pid, "SIGKILL");
      await this.wait(handle);
      this.forget(handle);
      throw err;
    }
    await testPause("before-exec", taskName);
    sayGo(child.stdin);
    await testPause("after-exec", taskName);
  }

  /**
   * True while the handle's process lives and ran the task. A live process that never ran it was
   * held when its agent died: no one can release it any more, so it is killed here (with its
   * group) and, once gone, reported as not running. (A parent told go an instant before its agent
   * died may not have written its record yet: it is killed too, and its wait() then reports an
   * exit without a status — the task restarts by its policy; still never two copies.)
   */
  async recover(handle: TaskHandle): Promise<boolean> {
    const startTime = handle.state.startTime;
    if (typeof startTime !== "string" || startTime === "") return false;
    if (!(await isSameLiveProcess(handle.pid, startTime))) return false;
    if (await this.ranCommand(handle)) return true;
    signalGroup(handle.pid, "SIGKILL");
    const deadline = Date.now() + KILL_HELD_TIMEOUT_MS;
    while (await isSameLiveProcess(handle.pid, startTime)) {
      if (Date.now() > deadline) {
        throw new Error(
          `held task process ${handle.pid} is still there ${KILL_HELD_TIMEOUT_MS} ms after SIGKILL`,
        );
      }
      await sleep(20);
    }
    return false;
  }

  /** Whether the handle's process was released to run the task (handles without a record: yes). */
  private async ranCommand(handle: TaskHandle): Promise<boolean> {
    const file = handle.state.startedFile;
    // A handle persisted by a berth before the start gate: its task ran as soon as it was spawned.
    if (typeof file !== "string" || file === "") return true;
    return ranCommand(file, handle.pid);
  }

  /**
   * The handle's kill signal (SIGTERM when it records none) to the group, SIGKILL after
   * killTimeoutMs; then any stragglers in the group.
   */
  async stop(handle: TaskHandle, killTimeoutMs: number): Promise<void> {
    const exited = this.wait(handle);
    if (!(await this.recover(handle))) {
      await exited;
      return;
    }
    signalGroup(handle.pid, killSignalOf(handle));
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

  /**
   * onExit, whose failure never hides the exit itself. After detach() an exit is the next agent's
   * to record and clean up after (detach's contract): onExit does not run, the wait never settles.
   */
  private finish(handle: TaskHandle, result: ExitResult): Promise<ExitResult> {
    if (this.detached.signal.aborted) return new Promise<never>(() => undefined);
    return this.onExit(handle, result).catch(() => result);
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
    if (status === null && !(await this.ranCommand(handle))) return notStarted(handle.pid);
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
    files: ParentFiles,
    pid: number,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<ExitResult> {
    const recorded = await readStatusFile(files.statusFile);
    if (recorded !== null) return resultFromStatus(recorded);
    const result =
      signal !== null ? { exitCode: statusFromSignal(signal), signal } : resultFromStatus(code ?? -1);
    return (await ranCommand(files.startedFile, pid)) ? result : { ...notStarted(pid), ...result };
  }
}

function notStarted(pid: number): ExitResult {
  return {
    exitCode: -1,
    signal: null,
    notStarted: true,
    error: `task process ${pid} never ran the task's command (it was stopped before it was released)`,
  };
}

/** The signal recorded in the handle; an unreadable record (never written by start()) is SIGTERM. */
function killSignalOf(handle: TaskHandle): NodeJS.Signals {
  const recorded = handle.state.killSignal;
  try {
    return parseKillSignal(typeof recorded === "string" ? recorded : "");
  } catch {
    return "SIGTERM";
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
