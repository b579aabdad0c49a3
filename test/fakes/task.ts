/** A fake task for alloc runner tests: runs until finished or killed, recording its CSI mounts. */
import type { TaskState } from "../../src/structs/alloc.js";
import type { AllocHookResources, CsiMount } from "../../src/client/allocrunner/hook_resources.js";

/** A task that runs until finished or killed, recording the CSI mounts it was given. */
export class FakeTask {
  private st: TaskState = {
    State: "pending",
    Failed: false,
    Restarts: 0,
    StartedAt: null,
    FinishedAt: null,
    Events: [],
  };
  killedWith: string | null = null;
  shutdowns = 0;
  mountsSeen: Map<string, CsiMount> | null = null;
  /**
   * Every refreshMounts call: the host path, and the "Volume Remounted" events the task had then
   * (the alloc must refresh the tasks before it announces the remount).
   */
  readonly refreshes: { hostPath: string; remountEventsBefore: number }[] = [];
  private finishWith!: (failed: boolean) => void;
  private readonly finished = new Promise<boolean>((resolve) => (this.finishWith = resolve));

  constructor(
    private readonly hookResources: AllocHookResources,
    private readonly onStateChange: (s: TaskState) => void,
    initialEvents: TaskState["Events"] = [],
  ) {
    this.st.Events = structuredClone(initialEvents);
  }

  async run(): Promise<void> {
    this.mountsSeen = this.hookResources.getCsiMounts();
    this.set({ State: "running", StartedAt: new Date().toISOString() });
    const failed = await this.finished;
    this.set({ State: "dead", Failed: failed, FinishedAt: new Date().toISOString() });
  }

  async kill(reason: string): Promise<void> {
    this.killedWith = reason;
    this.finishWith(false);
  }

  shutdown(): void {
    this.shutdowns++;
  }

  emitEvent(type: string, message: string, details: Record<string, string> = {}): void {
    const ev = { Type: type, Time: Date.now() * 1e6, DisplayMessage: message, Details: details };
    this.set({ Events: [...this.st.Events, ev] });
  }

  async refreshMounts(hostPath: string): Promise<boolean> {
    const remountEventsBefore = this.st.Events.filter((e) => e.Type === "Volume Remounted").length;
    this.refreshes.push({ hostPath, remountEventsBefore });
    if (this.refreshFails === null) return true;
    this.emitEvent("Volume Refresh Failed", this.refreshFails);
    return false;
  }

  /** Set: every refresh fails with this reason (reported as the task runner does). */
  refreshFails: string | null = null;

  finish(failed = false): void {
    this.finishWith(failed);
  }

  state(): TaskState {
    return structuredClone(this.st);
  }

  private set(patch: Partial<TaskState>): void {
    this.st = { ...this.st, ...patch };
    this.onStateChange(this.state());
  }
}
