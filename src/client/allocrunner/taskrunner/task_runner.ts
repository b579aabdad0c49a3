/**
 * Runs one task of an allocation through its lifecycle: prestart hooks, driver start, poststart
 * hooks (alongside the running task), wait, exited hooks, then the restart policy; stop hooks once
 * the task is dead for good. Every state change is reported through `onStateChange` (a copy).
 *
 * Restore (agent restart): the driver's handle is persisted when a task starts and deleted when the
 * task is dead for good. A runner that finds a persisted handle re-attaches instead of starting:
 * when `driver.recover` says the process is alive, prestart is skipped (the task already has its
 * mounts and env), poststart hooks run again (the plugin supervisor probes and re-registers) and the
 * runner waits on it; when it is gone, its recorded exit is treated as a normal exit and the restart
 * policy decides. A restored state that is already dead is final: the task is not run again.
 *
 * Mount refresh: when the alloc's csi_hook publishes a lost volume again, `refreshMounts` asks the
 * driver to re-bind the new mount wherever the running task mounts that target (the mounts the task
 * was started with; for a recovered task, its volume mounts as published now), without a restart.
 */
import path from "node:path";
import { isAbortError, sleep } from "../../../internal/abort.js";
import type { Logger } from "../../../internal/log.js";
import { allocTaskGroup, type Allocation, type TaskEvent, type TaskState } from "../../../structs/alloc.js";
import { asBerthError, BerthError } from "../../../structs/errors.js";
import { NS_PER_MS, type Task } from "../../../structs/job.js";
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import type { ExitResult, TaskDriver, TaskHandle, TaskMount, TaskStartConfig } from "../../drivers/driver.js";
import type { PluginRegistrar } from "../../dynamicplugins/types.js";
import type { CsiMount } from "../hook_resources.js";
import { isRecoverable, NonRecoverableError, type TaskHook, type TaskLifecycle } from "./hooks.js";
import type { PluginDirs } from "./plugin_dirs.js";
import { type PluginSupervisorOptions, PluginSupervisorHook } from "./plugin_supervisor_hook.js";
import { RestartTracker, formatMs } from "./restart_tracker.js";
import { TaskDirHook } from "./task_dir_hook.js";
import { buildTaskEnv, interpolate, type TaskEnvInput, type TaskNode } from "./task_env.js";
import { VolumeHook } from "./volume_hook.js";

export interface TaskRunnerConfig {
  alloc: Allocation;
  task: Task;
  allocDir: AllocDir;
  driver: TaskDriver;
  hookResources: { getCsiMounts(): Map<string, CsiMount> };
  pluginRegistrar: PluginRegistrar;
  /** The node as tasks see it: identity, attributes and meta for `${...}`, its host volumes. */
  node: TaskNode;
  dataDir: string;
  log: Logger;
  onStateChange(state: TaskState): void;
  /** Required for tasks with a csi_plugin block: how to Probe the plugin, and how often. */
  csiPlugin?: PluginSupervisorOptions;
  /** The node's owner of CSI plugin dirs (plugin_dirs.ts), shared by all plugin tasks. */
  pluginDirs?: PluginDirs;
  /** Where the running task's handle is persisted for an agent restart; none: nothing persists. */
  handles?: TaskHandleStore;
  /** The task's state as last persisted, when its alloc is restored after an agent restart. */
  restoredState?: TaskState;
  /** Events the alloc runner recorded for this task before the runner existed (e.g. claim retries). */
  initialEvents?: TaskEvent[];
}

/** The part of the client state DB that keeps task handles; StateDB satisfies it. */
export interface TaskHandleStore {
  putTaskHandle(allocId: string, task: string, handle: TaskHandle): void;
  getTaskHandle(allocId: string, task: string): TaskHandle | undefined;
  deleteTaskHandle(allocId: string, task: string): void;
}

/** Drivers that chroot into the task dir, so paths are given in the task's view. */
const CHROOTING_DRIVERS = new Set(["exec"]);
const DEFAULT_KILL_TIMEOUT_MS = 5000;
/** Nomad keeps the latest 10; a flapping plugin should not grow the state without bound either. */
const MAX_EVENTS = 50;

type RunOutcome =
  | { kind: "exited"; result: ExitResult; hookRestart: string | null }
  | { kind: "setup-failed"; error: BerthError }
  | { kind: "killed" };

export class TaskRunner {
  private readonly st: TaskState = {
    State: "pending",
    Failed: false,
    Restarts: 0,
    StartedAt: null,
    FinishedAt: null,
    Events: [],
  };
  private readonly hooks: TaskHook[];
  private readonly volumeHook: VolumeHook;
  private readonly killAc = new AbortController();
  /** Agent exit: poststart hooks and restart delays end, the task itself is left alone. */
  private readonly shutdownAc = new AbortController();
  private readonly restarts: RestartTracker;
  private readonly lifecycle: TaskLifecycle;
  private readonly log: Logger;
  private runPromise: Promise<void> | null = null;
  private handle: TaskHandle | null = null;
  /** The mounts the running task (`handle`) has. */
  private mounts: TaskMount[] = [];
  /** The driver start in progress, if any; settles once `handle` and `mounts` are set. */
  private starting: Promise<TaskHandle> | null = null;
  /**
   * Settles once run() has re-attached to a persisted handle, found it gone, or had none: a
   * refresh asked for before that (a restored alloc's prerun remounted a volume) waits for it.
   */
  private readonly recoveryDecided: Promise<void>;
  private decideRecovery: () => void = () => undefined;
  private hookRestartReason: string | null = null;
  private killReason: string | null = null;

  constructor(private readonly cfg: TaskRunnerConfig) {
    this.log = cfg.log.child(`task.${cfg.task.Name}`);
    this.recoveryDecided = new Promise((resolve) => (this.decideRecovery = resolve));
    const group = allocTaskGroup(cfg.alloc);
    if (!group)
      throw new BerthError("ERR_INTERNAL", `alloc ${cfg.alloc.ID} has no task group ${cfg.alloc.TaskGroup}`);
    this.restarts = new RestartTracker(
      RestartTracker.policyFor(cfg.alloc.Job.Type, cfg.task.RestartPolicy, group.RestartPolicy),
      cfg.alloc.Job.Type,
    );
    this.lifecycle = {
      emitEvent: (type, message, details) => this.emit(type, message, details),
      restart: (reason) => this.restartFromHook(reason),
    };
    this.volumeHook = new VolumeHook(
      cfg.task,
      group,
      cfg.driver,
      cfg.hookResources,
      cfg.node.hostVolumes ?? {},
      // Destinations see the task's env as it is before hooks add theirs (Nomad's volume hook too).
      (text) => interpolate(text, buildTaskEnv(this.envInput(), {}).scope),
    );
    this.hooks = [new TaskDirHook(cfg.allocDir, cfg.task.Name, this.lifecycle), this.volumeHook];
    const plugin = cfg.task.CSIPluginConfig;
    if (plugin) {
      if (!cfg.csiPlugin)
        throw new BerthError("ERR_INTERNAL", `task ${cfg.task.Name}: csi_plugin needs a probe`);
      this.hooks.push(
        new PluginSupervisorHook({
          alloc: cfg.alloc,
          task: cfg.task,
          plugin,
          dataDir: cfg.dataDir,
          registrar: cfg.pluginRegistrar,
          lifecycle: this.lifecycle,
          log: this.log,
          options: cfg.csiPlugin,
          driverSupportsMounts: cfg.driver.capabilities().supportsMounts,
          ...(cfg.pluginDirs ? { pluginDirs: cfg.pluginDirs } : {}),
        }),
      );
    }
    const restored = cfg.restoredState;
    if (restored) {
      Object.assign(this.st, structuredClone(restored));
      if (restored.State !== "dead") this.st.State = "pending";
    } else {
      this.st.Events.push(...structuredClone(cfg.initialEvents ?? []));
      this.emit("Received", "Task received by client");
    }
  }

  /** Records an event from outside the task's own lifecycle (e.g. an alloc hook remounted a volume). */
  emitEvent(type: string, message: string, details: Record<string, string> = {}): void {
    this.emit(type, message, details);
  }

  state(): TaskState {
    return structuredClone(this.st);
  }

  /**
   * The host mount at `hostPath` was replaced (a CSI volume published again after its node plugin
   * lost it): re-binds it into the running task at every destination the task mounts it, without a
   * restart. Never throws: a failure becomes a "Volume Refresh Failed" event (the task keeps its
   * old mount until it restarts), and the answer is false, so the alloc announces no remount that
   * did not reach this task. A task that is not running has nothing to refresh — its next start
   * binds the current mount; a start in progress is waited for, as it may have bound the old.
   */
  async refreshMounts(hostPath: string): Promise<boolean> {
    // Not running yet: its start binds the mounts as they are now (a restored alloc asks its
    // re-attached tasks only once their run() began, see AllocRunner.runTasks).
    if (!this.runPromise) return true;
    await this.recoveryDecided;
    await this.starting?.catch(() => undefined);
    const handle = this.handle;
    if (!handle) return true;
    let refreshed = true;
    for (const m of this.mounts.filter((x) => x.hostPath === hostPath)) {
      try {
        if (!this.cfg.driver.refreshMount) {
          throw new BerthError(
            "ERR_DRIVER",
            `driver ${JSON.stringify(this.cfg.driver.name)} cannot refresh the mounts of a running task`,
          );
        }
        await this.cfg.driver.refreshMount(handle, m);
        this.log.info("volume mount refreshed in the running task", { taskPath: m.taskPath });
      } catch (err) {
        // The task exited or is being stopped meanwhile: a next start binds the new mount anyway.
        if (this.handle !== handle || this.killReason !== null) return true;
        refreshed = false;
        const reason = asBerthError(err).message;
        this.log.warn("refreshing a volume mount in the running task failed", {
          taskPath: m.taskPath,
          reason,
        });
        this.emit(
          "Volume Refresh Failed",
          `the volume mounted at ${m.taskPath} was mounted again on the host, but the running task still has the old mount: ${reason}; restart the task to get the new one`,
          { mount: m.taskPath, error: reason },
        );
      }
    }
    return refreshed;
  }

  /** Resolves when the task is dead for good. Idempotent. */
  run(): Promise<void> {
    // A task restored as dead finished for good before the restart; its stop hooks already ran.
    if (this.cfg.restoredState?.State === "dead") this.decideRecovery();
    this.runPromise ??= this.cfg.restoredState?.State === "dead" ? Promise.resolve() : this.runLoop();
    return this.runPromise;
  }

  /** Stops the task without restarting it; resolves when it is dead. Safe before and after run(). */
  async kill(reason: string): Promise<void> {
    if (this.killReason === null && this.st.State !== "dead") {
      this.killReason = reason;
      const timeoutMs = this.killTimeoutMs();
      this.emit("Killing", `Sent interrupt. Waiting ${formatMs(timeoutMs)} before force killing`, {
        kill_reason: reason,
        kill_timeout: String(timeoutMs * NS_PER_MS),
      });
      this.killAc.abort(new BerthError("ERR_ABORTED", `task killed: ${reason}`));
      const handle = this.handle;
      if (handle) await this.stopHandle(handle);
    }
    await this.run();
  }

  /**
   * Agent exit: ends this runner's background work (poststart hooks such as the plugin health
   * loop, a pending restart delay) without stopping the task or recording anything; run() then
   * never settles — the next agent recovers the task from its persisted handle.
   */
  shutdown(): void {
    this.shutdownAc.abort(new BerthError("ERR_ABORTED", "agent shutting down"));
  }

  private async runLoop(): Promise<void> {
    try {
      let recovered = await this.recoverStored();
      while (this.killReason === null) {
        const outcome = recovered ?? (await this.runOnce());
        recovered = null;
        if (outcome.kind === "killed" || this.killReason !== null) break;
        if (outcome.kind === "setup-failed" && !isRecoverable(outcome.error)) {
          this.st.Failed = true;
          this.emit("Not Restarting", "Error was unrecoverable", { fails_task: "true" });
          break;
        }
        const success =
          outcome.kind === "exited" &&
          outcome.hookRestart === null &&
          outcome.result.exitCode === 0 &&
          !outcome.result.signal;
        const decision = this.restarts.next(success);
        if (!decision.restart) {
          this.st.Failed = decision.failed;
          if (decision.failed) this.emit("Not Restarting", decision.reason, { fails_task: "true" });
          break;
        }
        const hookReason = outcome.kind === "exited" ? outcome.hookRestart : null;
        const reason = hookReason ?? decision.reason;
        const message = hookReason ? `${hookReason} - ${decision.message}` : decision.message;
        this.emit("Restarting", message, {
          restart_reason: reason,
          start_delay: String(Math.round(decision.delayMs * NS_PER_MS)),
        });
        try {
          await sleep(decision.delayMs, AbortSignal.any([this.killAc.signal, this.shutdownAc.signal]));
        } catch (err) {
          // Agent exit: the next agent restarts the task (its handle is still persisted).
          if (this.shutdownAc.signal.aborted) return await new Promise<never>(() => undefined);
          if (isAbortError(err) || this.killAc.signal.aborted) break;
          throw err;
        }
        this.st.Restarts++;
        this.changed();
      }
    } catch (err) {
      this.log.error("task runner failed", { err });
      this.st.Failed = true;
      this.emit("Driver Failure", asBerthError(err).message);
    } finally {
      this.decideRecovery();
      await this.runStopHooks();
      this.cfg.handles?.deleteTaskHandle(this.cfg.alloc.ID, this.cfg.task.Name);
      if (this.killReason !== null) this.emit("Killed", "Task successfully killed");
      this.st.State = "dead";
      this.st.FinishedAt = new Date().toISOString();
      this.changed();
    }
  }

  /** One start of the task, from prestart to exited hooks. */
  private async runOnce(): Promise<RunOutcome> {
    this.hookRestartReason = null;
    const mounts: TaskMount[] = [];
    const hookEnv: Record<string, string> = {};
    let startConfig: TaskStartConfig;
    try {
      for (const h of this.hooks) {
        if (!h.prestart) continue;
        const res = await this.timed(h.name, "prestart", () => h.prestart!(this.killAc.signal));
        if (res?.mounts) mounts.push(...res.mounts);
        if (res?.env) Object.assign(hookEnv, res.env);
      }
      startConfig = this.startConfig(mounts, hookEnv);
    } catch (err) {
      if (this.killAc.signal.aborted) return { kind: "killed" };
      const e = asBerthError(err);
      this.emit("Setup Failure", e.message, { setup_error: e.message });
      return { kind: "setup-failed", error: e };
    }

    let handle: TaskHandle;
    try {
      this.starting = this.startDriver(startConfig);
      handle = await this.starting;
    } catch (err) {
      const e = asBerthError(err);
      this.emit("Driver Failure", e.message, { driver_error: e.message });
      const fatal = e.code === "ERR_VALIDATION" ? new NonRecoverableError(e.code, e.message) : e;
      return { kind: "setup-failed", error: fatal };
    } finally {
      this.starting = null;
    }
    this.cfg.handles?.putTaskHandle(this.cfg.alloc.ID, this.cfg.task.Name, handle);
    if (this.killReason !== null) await this.stopHandle(handle);
    this.st.State = "running";
    this.st.StartedAt = new Date(handle.startedAt).toISOString();
    this.emit("Started", "Task started by client");
    return this.supervise(handle);
  }

  /**
   * Re-attaches to the task a previous agent started, from its persisted handle. Null when there is
   * nothing to re-attach to (no handle, or another driver's); otherwise the outcome of that run:
   * a live process is supervised to its exit (or stopped at once when the task is being killed), a
   * vanished one yields the exit it recorded.
   */
  private async recoverStored(): Promise<RunOutcome | null> {
    const { alloc, task, driver } = this.cfg;
    const stored = this.cfg.handles?.getTaskHandle(alloc.ID, task.Name);
    if (!stored) {
      this.decideRecovery();
      return null;
    }
    if (stored.driver !== driver.name) {
      this.log.warn("ignoring a persisted handle of another driver", { driver: stored.driver });
      this.decideRecovery();
      return null;
    }
    const alive = await driver.recover(stored).catch((err: unknown) => {
      this.log.warn("recovering the task failed; treating it as exited", { err });
      return false;
    });
    if (!alive) {
      this.log.info("task process is gone since the agent stopped", { pid: stored.pid });
      this.decideRecovery();
      return this.exited(await driver.wait(stored));
    }
    this.log.info("re-attached to running task", { pid: stored.pid });
    this.handle = stored;
    this.mounts = this.recoveredMounts();
    this.decideRecovery();
    if (this.killReason !== null) await this.stopHandle(stored);
    this.st.State = "running";
    this.st.StartedAt = new Date(stored.startedAt).toISOString();
    this.changed();
    return this.supervise(stored);
  }

  /** Starts the task; `handle` and `mounts` are set when this settles, never in between. */
  private async startDriver(startConfig: TaskStartConfig): Promise<TaskHandle> {
    const handle = await this.cfg.driver.start(startConfig);
    this.handle = handle;
    this.mounts = startConfig.mounts;
    return handle;
  }

  /** A recovered task skipped prestart: its volume mounts as published now (see VolumeHook.mounts). */
  private recoveredMounts(): TaskMount[] {
    if (this.cfg.task.VolumeMounts.length === 0) return [];
    try {
      return this.volumeHook.mounts();
    } catch (err) {
      this.log.warn("cannot tell the recovered task's volume mounts; they will not be refreshed", {
        error: asBerthError(err).message,
      });
      return [];
    }
  }

  /** Poststart hooks alongside the running task, then its exit. */
  private async supervise(handle: TaskHandle): Promise<RunOutcome> {
    const runAc = new AbortController();
    const runSignal = AbortSignal.any([runAc.signal, this.killAc.signal, this.shutdownAc.signal]);
    const poststart = this.runPoststart(handle, runSignal);
    const result = await this.cfg.driver.wait(handle);
    runAc.abort();
    await poststart;
    this.handle = null;
    this.mounts = [];
    return this.exited(result);
  }

  /** Records an exit of the task and runs the exited hooks. */
  private async exited(result: ExitResult): Promise<RunOutcome> {
    this.st.State = "pending";
    this.emit(
      "Terminated",
      `Exit Code: ${result.exitCode}${result.signal ? `, Signal: ${result.signal}` : ""}`,
      {
        exit_code: String(result.exitCode),
        signal: result.signal ?? "",
        ...(result.error ? { exit_message: result.error } : {}),
      },
    );
    for (const h of this.hooks) {
      if (!h.exited) continue;
      await this.timed(h.name, "exited", () => h.exited!(result)).catch((err: unknown) =>
        this.log.error("exited hook failed", { err }),
      );
    }
    return { kind: "exited", result, hookRestart: this.hookRestartReason };
  }

  private async runPoststart(handle: TaskHandle, signal: AbortSignal): Promise<void> {
    for (const h of this.hooks) {
      if (!h.poststart || signal.aborted) continue;
      try {
        await this.timed(h.name, "poststart", () => h.poststart!(handle, signal));
      } catch (err) {
        if (signal.aborted) return;
        const msg = asBerthError(err).message;
        this.log.error("poststart hook failed", { err });
        await this.restartFromHook(msg);
        return;
      }
    }
  }

  private async runStopHooks(): Promise<void> {
    for (const h of this.hooks) {
      if (!h.stop) continue;
      await this.timed(h.name, "stop", () => h.stop!()).catch((err: unknown) =>
        this.log.error("stop hook failed", { err }),
      );
    }
  }

  private async restartFromHook(reason: string): Promise<void> {
    const handle = this.handle;
    if (!handle || this.killReason !== null) return;
    this.hookRestartReason = reason;
    this.emit("Restart Signaled", reason, { restart_reason: reason });
    await this.stopHandle(handle);
  }

  private async stopHandle(handle: TaskHandle): Promise<void> {
    try {
      await this.cfg.driver.stop(handle, this.killTimeoutMs());
    } catch (err) {
      this.log.error("stopping the task failed", { err });
    }
  }

  private envInput(): TaskEnvInput {
    return {
      alloc: this.cfg.alloc,
      task: this.cfg.task,
      allocDir: this.cfg.allocDir,
      node: this.cfg.node,
      taskView: CHROOTING_DRIVERS.has(this.cfg.driver.name),
    };
  }

  private startConfig(mounts: TaskMount[], hookEnv: Record<string, string>): TaskStartConfig {
    const { task, allocDir } = this.cfg;
    const { env, scope } = buildTaskEnv(this.envInput(), hookEnv);
    const { command, args } = parseConfig(task);
    const logs = allocDir.taskLogsDir(task.Name);
    return {
      allocId: this.cfg.alloc.ID,
      taskName: task.Name,
      taskDir: allocDir.taskDir(task.Name),
      allocSharedDir: allocDir.sharedDir,
      command: interpolate(command, scope),
      args: args.map((a) => interpolate(a, scope)),
      env,
      mounts,
      // Nomad runs CSI plugin tasks privileged: they need the host's devices.
      privileged: task.CSIPluginConfig !== null,
      stdoutPath: path.join(logs, `${task.Name}.stdout.0`),
      stderrPath: path.join(logs, `${task.Name}.stderr.0`),
    };
  }

  /** Runs one hook phase, logs its duration, and names the hook in any error it throws. */
  private async timed<T>(hook: string, phase: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } catch (err) {
      if (isAbortError(err)) throw err;
      const e = asBerthError(err);
      const message = `${phase} hook "${hook}" failed: ${e.message}`;
      throw isRecoverable(err)
        ? new BerthError(e.code, message, { cause: err })
        : new NonRecoverableError(e.code, message);
    } finally {
      this.log.debug("hook finished", { hook, phase, ms: Math.round(performance.now() - t0) });
    }
  }

  private killTimeoutMs(): number {
    return this.cfg.task.KillTimeout > 0 ? this.cfg.task.KillTimeout / NS_PER_MS : DEFAULT_KILL_TIMEOUT_MS;
  }

  private emit(type: string, message: string, details: Record<string, string> = {}): void {
    const ev: TaskEvent = {
      Type: type,
      Time: Date.now() * NS_PER_MS,
      DisplayMessage: message,
      Details: details,
    };
    this.st.Events.push(ev);
    // Events are also the task's trace in the agent log (details stay out: they may echo errors).
    this.cfg.log.debug("task event", { alloc: this.cfg.alloc.ID, type, message });
    if (this.st.Events.length > MAX_EVENTS) this.st.Events.splice(0, this.st.Events.length - MAX_EVENTS);
    this.changed();
  }

  private changed(): void {
    try {
      this.cfg.onStateChange(this.state());
    } catch (err) {
      this.log.error("onStateChange failed", { err });
    }
  }
}

/** `command` (required string) and `args` (optional string array) from the task's Config. */
function parseConfig(task: Task): { command: string; args: string[] } {
  const { command, args } = task.Config;
  if (typeof command !== "string" || command === "") {
    throw new NonRecoverableError(
      "ERR_VALIDATION",
      `task ${JSON.stringify(task.Name)}: config.command is required`,
    );
  }
  if (args !== undefined && (!Array.isArray(args) || !args.every((a) => typeof a === "string"))) {
    throw new NonRecoverableError(
      "ERR_VALIDATION",
      `task ${JSON.stringify(task.Name)}: config.args must be a list of strings`,
    );
  }
  return { command, args: args ?? [] };
}
