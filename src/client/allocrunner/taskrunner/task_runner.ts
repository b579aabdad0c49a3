/**
 * Runs one task of an allocation through its lifecycle: prestart hooks, driver start, poststart
 * hooks (alongside the running task), wait, exited hooks, then the restart policy; stop hooks once
 * the task is dead for good. Every state change is reported through `onStateChange` (a copy).
 *
 * Restore (agent restart): the handle is persisted before the task's command runs (startPersisted)
 * and deleted when the task is dead for good. A runner that finds one re-attaches instead of
 * starting: when `driver.recover` says the process is alive, prestart is skipped (the task has its
 * mounts and env), poststart hooks run again (the plugin supervisor probes and re-registers) and
 * the runner waits on it; when it is gone, its recorded exit counts as an exit and the restart
 * policy decides — unless it never ran (held at start): then it is started. A dead state is final.
 *
 * Mount refresh (mount_refresh.ts): `refreshMounts` re-binds a volume published again into the
 * running task (the mounts it was started with; for a recovered task, its volume mounts as now).
 */
import { isAbortError, sleep } from "../../../internal/abort.js";
import type { Logger } from "../../../internal/log.js";
import { allocTaskGroup, type TaskState } from "../../../structs/alloc.js";
import { asBerthError, BerthError } from "../../../structs/errors.js";
import { NS_PER_MS } from "../../../structs/job.js";
import type { ExitResult, TaskHandle, TaskMount, TaskStartConfig } from "../../drivers/driver.js";
import { terminatedEvent } from "../../drivers/exit_event.js";
import { runExitedHooks, runPoststartHooks, runStopHooks, timedHook } from "./hook_phases.js";
import { refreshTaskMounts } from "./mount_refresh.js";
import { isRecoverable, NonRecoverableError, type TaskHook, type TaskLifecycle } from "./hooks.js";
import { RestartTracker, formatMs } from "./restart_tracker.js";
import type { TaskRunnerConfig } from "./task_runner_config.js";
import { buildStartConfig, startPersisted } from "./task_start.js";
import { taskHooks } from "./task_hooks.js";
import { killTimeoutMs, newTaskEvent } from "./task_event.js";
import { VolumeHook } from "./volume_hook.js";

export type { TaskHandleStore, TaskRunnerConfig } from "./task_runner_config.js";

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
      Math.random,
      cfg.task.Lifecycle ?? null,
    );
    this.lifecycle = {
      emitEvent: (type, message, details) => this.emit(type, message, details),
      restart: (reason) => this.restartFromHook(reason),
    };
    ({ hooks: this.hooks, volumeHook: this.volumeHook } = taskHooks(cfg, group, this.lifecycle, this.log));
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
    return refreshTaskMounts({
      driver: this.cfg.driver,
      handle,
      mounts: this.mounts.filter((x) => x.hostPath === hostPath),
      log: this.log,
      // The task exited or is being stopped meanwhile: a next start binds the new mount anyway.
      gone: () => this.handle !== handle || this.killReason !== null,
      emit: (type, message, details) => this.emit(type, message, details),
    });
  }

  /** Resolves when the task is dead for good. Idempotent. */
  run(): Promise<void> {
    // A task restored as dead finished for good before the restart; its stop hooks already ran.
    if (this.cfg.restoredState?.State === "dead") this.decideRecovery();
    this.runPromise ??= this.cfg.restoredState?.State === "dead" ? Promise.resolve() : this.runLoop();
    return this.runPromise;
  }

  /** `alloc signal|restart|exec` (client_alloc.ts): the running task's process, or null. */
  runningHandle(): TaskHandle | null {
    return this.killReason === null ? this.handle : null;
  }
  restart(reason: string): Promise<void> {
    this.restarts.requestRestart();
    return this.restartFromHook(reason);
  }

  /** Stops the task without restarting it; resolves when it is dead. Safe before and after run(). */
  async kill(reason: string): Promise<void> {
    if (this.killReason === null && this.st.State !== "dead") {
      this.killReason = reason;
      const timeoutMs = killTimeoutMs(this.cfg.task);
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
      await runStopHooks(this.hooks, this.log);
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
        const res = await timedHook(this.log, h.name, "prestart", () => h.prestart!(this.killAc.signal));
        if (res?.mounts) mounts.push(...res.mounts);
        if (res?.env) Object.assign(hookEnv, res.env);
      }
      startConfig = buildStartConfig(this.cfg, mounts, hookEnv, (t, m, d) => this.emit(t, m, d));
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
      this.decideRecovery();
      const result = await driver.wait(stored);
      // Held at start when the last agent died (shared/start_gate.ts): it never ran, start it.
      const why = result.notStarted ? "task never ran; starting it" : "task process is gone";
      this.log.info(why, { pid: stored.pid });
      return result.notStarted ? null : this.exited(result);
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
    const handle = await startPersisted(this.cfg, startConfig);
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
    const poststart = runPoststartHooks(this.hooks, handle, runSignal, this.log, (reason) =>
      this.restartFromHook(reason),
    );
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
    const ev = terminatedEvent(result);
    this.emit("Terminated", ev.message, ev.details);
    await runExitedHooks(this.hooks, result, this.log);
    return { kind: "exited", result, hookRestart: this.hookRestartReason };
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
      await this.cfg.driver.stop(handle, killTimeoutMs(this.cfg.task));
    } catch (err) {
      this.log.error("stopping the task failed", { err });
    }
  }

  private emit(type: string, message: string, details: Record<string, string> = {}): void {
    this.st.Events.push(newTaskEvent(type, message, details));
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
