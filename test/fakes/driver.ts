/** A programmable TaskDriver for task-runner tests: each start exits as scripted or when stopped. */
import type { DriverInfo } from "../../src/structs/node.js";
import type {
  DriverCapabilities,
  ExitResult,
  TaskDriver,
  TaskHandle,
  TaskMount,
  TaskStartConfig,
} from "../../src/client/drivers/driver.js";

interface Running {
  resolve(r: ExitResult): void;
  done: Promise<ExitResult>;
}

export class FakeDriver implements TaskDriver {
  readonly starts: TaskStartConfig[] = [];
  stops = 0;
  detaches = 0;
  /** Exit codes for successive starts; a start past the end runs until stopped. */
  exitCodes: number[] = [];
  exitAfterMs = 5;
  startError: Error | null = null;
  /** Every refreshMount call: the task's pid and the mount. */
  readonly refreshes: { pid: number; mount: TaskMount }[] = [];
  /** When set, refreshMount rejects with it. */
  refreshError: Error | null = null;
  private readonly running = new Map<number, Running>();
  private readonly exited = new Set<number>();
  private nextPid = 1000;

  constructor(
    readonly name = "mock",
    private readonly supportsMounts = true,
  ) {}

  capabilities(): DriverCapabilities {
    return { supportsMounts: this.supportsMounts };
  }

  async fingerprint(): Promise<DriverInfo> {
    return { Detected: true, Healthy: true, HealthDescription: "", SupportsMounts: this.supportsMounts };
  }

  async start(cfg: TaskStartConfig): Promise<TaskHandle> {
    if (this.startError) throw this.startError;
    const n = this.starts.push(cfg) - 1;
    const pid = this.nextPid++;
    let resolve!: (r: ExitResult) => void;
    const done = new Promise<ExitResult>((r) => (resolve = r));
    void done.then(() => this.exited.add(pid));
    this.running.set(pid, { resolve, done });
    const code = this.exitCodes[n];
    if (code !== undefined) setTimeout(() => resolve({ exitCode: code, signal: null }), this.exitAfterMs);
    return { driver: this.name, pid, startedAt: Date.now(), state: {} };
  }

  wait(handle: TaskHandle): Promise<ExitResult> {
    const r = this.running.get(handle.pid);
    if (!r) throw new Error(`unknown pid ${handle.pid}`);
    return r.done;
  }

  async stop(handle: TaskHandle): Promise<void> {
    this.stops++;
    this.running.get(handle.pid)?.resolve({ exitCode: 143, signal: "SIGTERM" });
    await this.wait(handle);
  }

  /** A handle of this driver's is recoverable while its task has not exited. */
  async recover(handle: TaskHandle): Promise<boolean> {
    return this.running.has(handle.pid) && !this.exited.has(handle.pid);
  }

  async refreshMount(handle: TaskHandle, mount: TaskMount): Promise<void> {
    this.refreshes.push({ pid: handle.pid, mount });
    if (this.refreshError) throw this.refreshError;
  }

  /** Ends a running task as if it exited by itself (e.g. while the agent was away). */
  exit(pid: number, exitCode: number): void {
    this.running.get(pid)?.resolve({ exitCode, signal: null });
  }

  /** Fake tasks hold no OS resources, so there is nothing to let go of. */
  detach(): void {
    this.detaches++;
  }
}
