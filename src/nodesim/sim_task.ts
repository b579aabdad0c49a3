/**
 * The simulated task runner: a task that "runs" without a process, so the alloc runner around it
 * (alloc dir, csi_hook claim + NodeStage/NodePublish, postrun release, status reports) is the real
 * one. Like Nomad's mock driver, `config { run_for = "5s" }` (or milliseconds as a number) decides
 * how long a batch task runs before it completes; a service or system task runs until it is killed,
 * unless run_for is given. `exit_code` other than 0 makes the task fail when it ends by itself.
 *
 * States: pending → running (at once) → dead; killed → dead, not failed.
 */
import type { Allocation, TaskEvent, TaskState } from "../structs/alloc.js";
import type { Task } from "../structs/job.js";
import { NS_PER_MS } from "../structs/job.js";
import { parseGoDurationMs } from "../structs/acl_records.js";
import type { TaskRunnerLike } from "../client/allocrunner/alloc_runner_config.js";
import type { AllocHookResources } from "../client/allocrunner/hook_resources.js";

/** Events kept per task, as the real task runner caps its list. */
const MAX_EVENTS = 10;

/** How long the task runs before ending by itself; null: until killed. */
export function runForMs(task: Task, jobType: string): number | null {
  const v = task.Config["run_for"];
  if (typeof v === "number" && Number.isFinite(v) && v >= 0) return v;
  if (typeof v === "string") {
    const ms = parseGoDurationMs(v);
    if (ms !== undefined) return ms;
  }
  return jobType === "batch" || jobType === "sysbatch" ? 0 : null;
}

export class SimTaskRunner implements TaskRunnerLike {
  private st: TaskState;
  private finish: ((how: { failed: boolean; reason: string }) => void) | null = null;
  private readonly done: Promise<{ failed: boolean; reason: string }>;
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private markDead: () => void = () => undefined;
  /** Settles once the task is dead (kill() waits for it, as a real runner waits for its process). */
  private readonly dead = new Promise<void>((resolve) => (this.markDead = resolve));
  /** The CSI mounts the task was given when it started (what a driver would mount). */
  csiMountCount = 0;

  constructor(
    private readonly alloc: Allocation,
    private readonly task: Task,
    private readonly hookResources: AllocHookResources,
    private readonly onStateChange: (s: TaskState) => void,
    restoredState?: TaskState,
    initialEvents: TaskEvent[] = [],
  ) {
    this.st = restoredState ?? {
      State: "pending",
      Failed: false,
      Restarts: 0,
      StartedAt: null,
      FinishedAt: null,
      Events: structuredClone(initialEvents),
    };
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  async run(): Promise<void> {
    this.started = true;
    if (this.st.State === "dead") return this.markDead();
    this.csiMountCount = this.hookResources.getCsiMounts().size;
    if (this.st.State !== "running") {
      this.event("Started", "Task started by the node simulator");
      this.set({ State: "running", StartedAt: new Date().toISOString() });
    }
    const runFor = runForMs(this.task, this.alloc.Job.Type);
    if (runFor !== null) {
      this.timer = setTimeout(() => this.end({ failed: this.exitCode() !== 0, reason: "" }), runFor);
    }
    const how = await this.done;
    if (this.timer) clearTimeout(this.timer);
    if (how.reason) this.event("Killed", how.reason);
    else this.event("Terminated", `Exit Code: ${this.exitCode()}`);
    this.set({ State: "dead", Failed: how.failed, FinishedAt: new Date().toISOString() });
  }

  async kill(reason: string): Promise<void> {
    if (!this.started) {
      // Never started: dead at once, as a real runner whose task never ran.
      if (this.st.State !== "dead") this.set({ State: "dead", FinishedAt: new Date().toISOString() });
      this.started = true;
    }
    this.end({ failed: false, reason: reason || "Task killed" });
    await this.dead;
  }

  shutdown(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  state(): TaskState {
    return structuredClone(this.st);
  }

  emitEvent(type: string, message: string, details: Record<string, string> = {}): void {
    this.event(type, message, details);
    this.onStateChange(this.state());
  }

  /** Nothing is mounted into a simulated task: a replaced host mount needs no refresh. */
  async refreshMounts(): Promise<boolean> {
    return true;
  }

  private exitCode(): number {
    const v = this.task.Config["exit_code"];
    return typeof v === "number" ? v : 0;
  }

  private end(how: { failed: boolean; reason: string }): void {
    const f = this.finish;
    this.finish = null;
    f?.(how);
  }

  private event(type: string, message: string, details: Record<string, string> = {}): void {
    const ev: TaskEvent = {
      Type: type,
      Time: Date.now() * NS_PER_MS,
      DisplayMessage: message,
      Details: details,
    };
    this.st = { ...this.st, Events: [...this.st.Events, ev].slice(-MAX_EVENTS) };
  }

  private set(patch: Partial<TaskState>): void {
    this.st = { ...this.st, ...patch };
    this.onStateChange(this.state());
    if (this.st.State === "dead") this.markDead();
  }
}
