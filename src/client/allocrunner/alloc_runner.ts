/**
 * Runs one allocation on this node: prerun hooks (alloc dir, csi_hook), then its tasks in their
 * lifecycle order (prestart, main, poststart, poststop: alloc_runner_lifecycle.ts), then postrun
 * hooks — so volumes are released only after poststop tasks ended; reports ClientStatus
 * pending → running → complete/failed.
 *
 * Lifecycle contracts:
 * - `update(alloc)` with DesiredStatus stop/evict kills the tasks (and abandons a prerun that is
 *   still waiting, e.g. on a claim); poststop tasks still run once the others are dead, however
 *   early the stop came (before prerun, during it, during prestart, or while the agent was away);
 *   then postrun. A prerun that fails (not stopped) runs no task at all.
 * - `destroy()` kills, waits for run and postrun's background work, runs destroy hooks, removes
 *   the alloc dir and forgets the alloc's state.
 * - `shutdown()` is agent exit: never kills tasks or unmounts (a restarted agent picks up).
 * - An alloc whose persisted status is terminal, or that has releases pending, goes straight to
 *   postrun when run again (a restart resumes the release).
 * - Restore (agent restart): an alloc with a persisted non-terminal status keeps that status and
 *   its task states; prerun runs again (the csi_hook reuses mounts still in place) and each task
 *   runner re-attaches to its persisted process. A restored task of a stopped alloc is killed
 *   only after prerun, so nothing is unmounted under a live task.
 */
import { abortError, anySignal } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import {
  allocTaskGroup,
  isClientTerminal,
  type Allocation,
  type ClientStatus,
  type TaskState,
} from "../../structs/alloc.js";
import { asBerthError } from "../../structs/errors.js";
import type { AllocClientUpdate } from "../../structs/rpc.js";
import { AllocDir } from "../allocdir/alloc_dir.js";
import { clientStatusOf, newTaskState, runnerFailed, withPrerunEvent } from "./alloc_status.js";
import { stageOf, TaskCoordinator } from "./alloc_runner_lifecycle.js";
import { runPostrun, runPrerun } from "./alloc_runner_postrun.js";
import type { AllocRunnerConfig, TaskRunnerLike } from "./alloc_runner_config.js";
import { allocHooks } from "./alloc_runner_hooks.js";
import { AllocHookResources } from "./hook_resources.js";
import { runHookPhase, type AllocHook } from "./hooks.js";

export class AllocRunner {
  readonly allocDir: AllocDir;
  readonly hookResources = new AllocHookResources();
  private alloc: Allocation;
  private readonly log: Logger;
  private readonly hooks: AllocHook[];
  private readonly stopCtl = new AbortController();
  private readonly shutdownCtl = new AbortController();
  private readonly taskRunners = new Map<string, TaskRunnerLike>();
  private readonly taskStates: Record<string, TaskState> = {};
  private readonly background = new Set<Promise<void>>();
  private status: ClientStatus = "pending";
  private description = "";
  private running: Promise<void> | undefined;
  private lastUpdate = "";
  /** Task states persisted by a previous agent, when this runner restores a running alloc. */
  private restoredTasks: Record<string, TaskState> | null = null;
  /** Publish targets a restored prerun made again before the task runners existed. */
  private readonly remountedBeforeTasks = new Set<string>();
  private coordinator: TaskCoordinator | null = null;
  private stopReason = "";
  private fenced = false; // stopped by the node's self-fence: no task runs any more, not even poststop

  constructor(private readonly cfg: AllocRunnerConfig) {
    this.alloc = cfg.alloc;
    this.log = cfg.log.child("alloc_runner").child(cfg.alloc.ID);
    this.allocDir = new AllocDir(cfg.dataDir, cfg.alloc.ID);
    const tasks = allocTaskGroup(cfg.alloc)?.Tasks ?? [];
    for (const t of tasks) this.taskStates[t.Name] = newTaskState();
    this.hooks = allocHooks(
      cfg,
      this.allocDir,
      this.hookResources,
      tasks.map((t) => t.Name),
      this.log,
      {
        alloc: () => this.alloc,
        emitEvent: (type, message, details) => this.emitTaskEvent(type, message, details),
        refreshTaskMounts: (hostPath) => this.refreshTaskMounts(hostPath),
      },
    );
  }

  get clientStatus(): ClientStatus {
    return this.status;
  }

  /** Runs the alloc to the end of postrun; calling it again returns the same promise. */
  run(): Promise<void> {
    this.running ??= this.doRun();
    return this.running;
  }

  /** A server update; `unknown` (it did not hear from this node for a while) is answered with the status. */
  update(alloc: Allocation): void {
    this.alloc = alloc;
    this.cfg.stateDb.putAlloc(alloc);
    if (alloc.DesiredStatus !== "run") this.stop(`alloc desired status is ${alloc.DesiredStatus}`);
    if (alloc.ClientStatus === "unknown") this.emit(true);
  }

  /** The node's own stop (client/fence/): as a stop, but poststop tasks do not run either. */
  fence(alloc: Allocation, reason: string): void {
    this.fenced = true;
    this.stop(reason);
    this.update(alloc);
  }

  /** Resolves once postrun's background work (volume releases) has settled. */
  async released(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  async destroy(): Promise<void> {
    this.stop("alloc destroyed");
    await this.run();
    const results = await Promise.allSettled([...this.background]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw asBerthError(failed.reason);
    if (this.shutdownCtl.signal.aborted) return;
    for (const hook of this.hooks) {
      if (hook.destroy) {
        const h = hook;
        await runHookPhase(hook, "destroy", this.log, () => h.destroy!(this.shutdownCtl.signal));
      }
    }
    await this.allocDir.destroy();
    this.cfg.stateDb.deleteAlloc(this.alloc.ID);
  }

  /** Task `name`'s runner once the tasks started (`alloc signal|restart|exec`). */
  taskRunner(name: string): TaskRunnerLike | undefined {
    return this.taskRunners.get(name);
  }
  /** Agent exit: cancel waiting and background work; tasks keep running, mounts stay. */
  async shutdown(): Promise<void> {
    this.shutdownCtl.abort(abortError());
    for (const hook of this.hooks) hook.shutdown?.();
    for (const tr of this.taskRunners.values()) tr.shutdown();
    await Promise.allSettled([this.running, ...this.background]);
  }

  /**
   * An event on every task of the alloc: through the task runner once it exists, else recorded in
   * the task's state now (visible while prerun waits) and handed to the runner when it is made.
   */
  emitTaskEvent(type: string, message: string, details: Record<string, string> = {}): void {
    for (const name of Object.keys(this.taskStates)) {
      const tr = this.taskRunners.get(name);
      if (tr) {
        tr.emitEvent(type, message, details);
        continue;
      }
      this.taskStates[name] = withPrerunEvent(this.taskStates[name]!, type, message, details);
    }
    this.emit();
  }

  /**
   * A volume remounted at `hostPath` on the host: every task runner re-binds it where it is used.
   * During a restored alloc's prerun its task runners do not exist yet: the path is kept and each
   * re-attached task gets it once its run() began (runTasks). Answers whether every task that
   * mounts it has the new mount now (a task that failed reported it as its own event).
   */
  async refreshTaskMounts(hostPath: string): Promise<boolean> {
    if (this.taskRunners.size === 0) {
      if (this.restoredTasks) this.remountedBeforeTasks.add(hostPath);
      return true;
    }
    const runners = [...this.taskRunners];
    const refreshed = await Promise.all(runners.map(([n, tr]) => this.refreshTaskMount(n, tr, hostPath)));
    return refreshed.every(Boolean);
  }

  /** One task's refresh of `hostPath`; never throws (a failure is logged and answers false). */
  private refreshTaskMount(name: string, tr: TaskRunnerLike, hostPath: string): Promise<boolean> {
    return tr.refreshMounts(hostPath).catch((err: unknown) => {
      this.log.error("refreshing a remounted volume in a task failed", { task: name, error: err });
      return false;
    });
  }

  private stop(reason: string): void {
    if (this.stopCtl.signal.aborted) return;
    this.stopReason = reason;
    this.stopCtl.abort(abortError());
    // Poststop tasks run once the others are dead, also on a stop.
    for (const [name, tr] of this.taskRunners) {
      if (this.fenced || !this.coordinator?.isPoststop(name)) this.killTask(name, tr, reason);
    }
  }

  private killTask(name: string, tr: TaskRunnerLike, reason: string): void {
    this.coordinator?.markKilled(name);
    this.track(
      tr
        .kill(reason)
        .catch((err: unknown) => this.log.error("killing task failed", { task: name, error: err })),
    );
  }

  private async doRun(): Promise<void> {
    this.cfg.stateDb.putAlloc(this.alloc);
    const stored = this.cfg.stateDb.getAlloc(this.alloc.ID)?.clientUpdate;
    const pending = Object.keys(this.cfg.stateDb.getPendingReleases(this.alloc.ID)).length > 0;
    if ((stored && isClientTerminal(stored.ClientStatus)) || pending) {
      if (stored) {
        this.status = stored.ClientStatus;
        this.description = stored.ClientDescription;
        Object.assign(this.taskStates, structuredClone(stored.TaskStates));
        // The previous agent may have died before this status reached the server (updates are
        // batched): say it again — the server takes the same update idempotently.
        this.emit(true);
      }
      this.log.info("alloc already finished; resuming postrun");
      await this.postrun();
      return;
    }
    if (stored) this.restore(stored);
    if (!this.restoredTasks) this.setStatus("pending", "");
    const away = this.restoredTasks ? "while the agent was away" : "before it started";
    if (this.alloc.DesiredStatus !== "run") this.stop(`alloc was stopped ${away}`);
    if (this.stopCtl.signal.aborted && !this.hasPoststop()) return this.endStopped("before it started");

    // A stop ends prerun's waiting (a claim), not the alloc: with poststop tasks, the tasks still
    // run below, the others killed before they start and poststop ones started once those are dead
    // (Nomad's task coordinator), with what prerun set up (stopped, csi_hook claims nothing new).
    const prerunSignal = anySignal([this.stopCtl.signal, this.shutdownCtl.signal]);
    const err = await runPrerun(this.hooks, prerunSignal, this.log);
    if (err && this.shutdownCtl.signal.aborted) return;
    if (err && !this.stopCtl.signal.aborted) {
      // A failed prerun runs no task, poststop ones included (Nomad's MarkFailedKill).
      await this.killRestoredTasks(`prerun failed: ${err.message}`);
      this.setStatus("failed", err.message);
      return this.postrun();
    }
    if (this.stopCtl.signal.aborted && !this.hasPoststop())
      return this.endStopped("before its tasks started");

    await this.runTasks();
    if (this.shutdownCtl.signal.aborted) return;
    const { status, description } = clientStatusOf(Object.values(this.taskStates));
    this.setStatus(status, description);
    await this.postrun();
  }

  private hasPoststop(): boolean {
    if (this.fenced) return false;
    return (allocTaskGroup(this.alloc)?.Tasks ?? []).some((t) => stageOf(t) === "poststop");
  }

  /** Stopped before its tasks ran, with no poststop task: what a previous agent left running is killed. */
  private async endStopped(when: string): Promise<void> {
    await this.killRestoredTasks(this.stopReason);
    this.setStatus("complete", `alloc was stopped ${when}`);
    await this.postrun();
  }

  /** Takes over the status and task states a previous agent persisted for this running alloc. */
  private restore(stored: AllocClientUpdate): void {
    this.restoredTasks = structuredClone(stored.TaskStates);
    Object.assign(this.taskStates, this.restoredTasks);
    this.status = stored.ClientStatus;
    this.description = stored.ClientDescription;
    this.log.info("restoring alloc after an agent restart", { status: stored.ClientStatus });
  }

  /**
   * Restore only: re-attaches to the tasks a previous agent left running and kills them (they must
   * not outlive their volumes). A no-op for an alloc that is not being restored.
   */
  private async killRestoredTasks(reason: string): Promise<void> {
    if (!this.restoredTasks) return;
    const runners = this.newTaskRunners();
    await Promise.all(
      runners.map(async ([name, tr]) => {
        try {
          await tr.kill(reason);
        } catch (err) {
          this.log.error("killing a restored task failed", { task: name, error: err });
        }
      }),
    );
  }

  private newTaskRunners(): [string, TaskRunnerLike][] {
    const group = allocTaskGroup(this.alloc);
    return (group?.Tasks ?? []).map((task) => {
      // The current state, not the persisted one: it carries events recorded during prerun.
      const current = this.taskStates[task.Name];
      const restoredState = this.restoredTasks?.[task.Name] && current;
      const tr = this.cfg.newTaskRunner({
        task,
        allocDir: this.allocDir,
        hookResources: this.hookResources,
        onStateChange: (s) => this.onTaskState(task.Name, s),
        ...(restoredState ? { restoredState } : { initialEvents: current?.Events ?? [] }),
      });
      this.taskRunners.set(task.Name, tr);
      return [task.Name, tr];
    });
  }

  /**
   * Runs every task to its end, each once its lifecycle gate opens; resolves early (tasks untouched)
   * when the agent shuts down.
   */
  private async runTasks(): Promise<void> {
    const runs: Promise<void>[] = [];
    const runners = this.newTaskRunners();
    const coordinator = new TaskCoordinator(allocTaskGroup(this.alloc)?.Tasks ?? []);
    this.coordinator = coordinator;
    coordinator.update(this.taskStates);
    // Volumes a restored prerun published again: each recovered task, once run() began, re-binds them.
    const remounted = [...this.remountedBeforeTasks];
    this.remountedBeforeTasks.clear();
    // Stopped before the tasks were reached: the others are killed (a restored one is re-attached
    // first), which opens the poststop gate.
    if (this.stopCtl.signal.aborted) {
      for (const [name, tr] of runners)
        if (this.fenced || !coordinator.isPoststop(name)) this.killTask(name, tr, this.stopReason);
    }
    for (const [name, tr] of runners) {
      runs.push(
        (async () => {
          await coordinator.gate(name);
          if (this.fenced && coordinator.isPoststop(name)) return; // killed unstarted: never run
          const run = tr.run();
          for (const hostPath of remounted)
            this.track(this.refreshTaskMount(name, tr, hostPath).then(() => undefined));
          await run;
        })().catch((err: unknown) => {
          const message = asBerthError(err).message;
          this.log.error("task runner failed", { task: name, error: message });
          this.onTaskState(name, runnerFailed(tr.state(), message));
        }),
      );
    }
    const shutdown = new Promise<void>((resolve) => {
      if (this.shutdownCtl.signal.aborted) resolve();
      this.shutdownCtl.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await Promise.race([Promise.all(runs), shutdown]);
  }

  private onTaskState(name: string, s: TaskState): void {
    this.taskStates[name] = s;
    const kill = this.coordinator?.killDecision(this.taskStates);
    for (const other of kill?.tasks ?? []) {
      const tr = this.taskRunners.get(other)!;
      tr.emitEvent(kill!.type, kill!.message);
      this.killTask(other, tr, kill!.reason);
    }
    this.coordinator?.update(this.taskStates);
    const { status, description } = clientStatusOf(Object.values(this.taskStates));
    // Terminal statuses are set once every task runner returned, not on the first dead task; and
    // once set, a later task change (a killed restored task, an event from a release) keeps them.
    if ((status === "running" || status === "pending") && !isClientTerminal(this.status)) {
      this.setStatus(status, description);
    } else this.emit();
  }

  private async postrun(): Promise<void> {
    await runPostrun(this.hooks, this.shutdownCtl.signal, this.log, (p) => this.track(p));
  }

  private setStatus(status: ClientStatus, description: string): void {
    this.status = status;
    this.description = description;
    this.emit();
  }

  /** Persists and reports the alloc's status; `force` reports it even when unchanged. */
  private emit(force = false): void {
    const update: AllocClientUpdate = {
      ID: this.alloc.ID,
      ClientStatus: this.status,
      ClientDescription: this.description,
      TaskStates: structuredClone(this.taskStates),
    };
    const digest = JSON.stringify(update);
    if (digest === this.lastUpdate && !force) return;
    this.lastUpdate = digest;
    this.cfg.stateDb.putAllocClientUpdate(update);
    this.cfg.onUpdate(update);
  }

  private track(p: Promise<void>): void {
    const tracked = p.finally(() => this.background.delete(tracked));
    this.background.add(tracked);
    // Observed here so a rejection is never unhandled; destroy() reads the outcome.
    void tracked.catch(() => undefined);
  }
}
