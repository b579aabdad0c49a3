/**
 * The task driver contract. A driver starts one task process, waits for it, stops it, and (for
 * drivers that can) recovers it after an agent restart from the serialisable handle it returned.
 */
import type { Readable, Writable } from "node:stream";
import type { DriverInfo } from "../../structs/node.js";
import type { MemoryStats } from "../../structs/resource_usage.js";
import type { TaskResources } from "./shared/cgroups/limits.js";

export interface TaskMount {
  /** Host path to expose (for CSI volumes: the published target path in the host's view). */
  hostPath: string;
  /** Absolute path inside the task. */
  taskPath: string;
  readOnly: boolean;
  /**
   * "bidirectional": mounts made by the task under taskPath appear on the host (CSI plugins);
   * the host side must already be a shared mount. Others: the task's copy is private.
   */
  propagation: "private" | "host-to-task" | "bidirectional";
}

export interface TaskStartConfig {
  allocId: string;
  taskName: string;
  /** Host path of the task's root directory (AllocDir.taskDir). */
  taskDir: string;
  /** Host path of the alloc's shared directory (AllocDir.sharedDir), /alloc in the task. */
  allocSharedDir: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  mounts: TaskMount[];
  /**
   * The task is privileged (a CSI plugin task, as Nomad runs them): exec gives it the host's /dev
   * instead of the minimal device set. Absent: false.
   */
  privileged?: boolean;
  stdoutPath: string;
  stderrPath: string;
  /**
   * The task's `logs` rotation, for a driver that writes the task's output files itself (docker;
   * the process drivers' output is rotated by logmon). Absent: Nomad's defaults.
   */
  logRotation?: { maxFiles: number; maxFileBytes: number };
  /**
   * What the task's cgroup holds it to (shared/cgroups/limits.ts). Absent: the task runs without a
   * cgroup of its own (callers that predate resources; the task runner always sets it).
   */
  resources?: TaskResources;
  /** Task.KillSignal, sent first on stop ("" or absent: SIGTERM). Checked by start(). */
  killSignal?: string;
  /**
   * Task.User: the task's command runs as this user; "" or absent: the driver's default (raw_exec:
   * the agent's user; exec: `nobody`, or the agent's user for a privileged task).
   */
  user?: string;
  /**
   * The task's whole `config` block with every `${...}` in its strings expanded (as command and
   * args are): drivers whose capabilities say `readsConfig` take their settings from it (docker's
   * image, mounts, …). Absent: callers that predate it.
   */
  config?: Record<string, unknown>;
  /**
   * Records a task event (e.g. docker's "Downloading image", or a privileged task run with the
   * host's capabilities instead). Absent: the driver's events are only logged.
   */
  emitEvent?: (type: string, message: string, details?: Record<string, string>) => void;
}

/** Serialisable: persisted in the client state DB so a restarted agent can recover the task. */
export interface TaskHandle {
  driver: string;
  pid: number;
  /** Unix milliseconds. */
  startedAt: number;
  /** Driver-private data needed to recover (e.g. process start time to detect pid reuse). */
  state: Record<string, string | number | boolean>;
}

export interface ExitResult {
  exitCode: number;
  signal: string | null;
  /** Set when the driver could not determine the outcome (e.g. recovered process vanished). */
  error?: string;
  /**
   * The process never ran the task's command: it was held at start (shared/start_gate.ts) and its
   * agent stopped before saying go. Not an exit of the task: the task runner starts it afresh.
   */
  notStarted?: boolean;
  /** The kernel's OOM killer killed a process of the task's cgroup (its memory limit was hit). */
  oomKilled?: boolean;
}

/**
 * Called by start() once the task's process exists and before its command can run, with the
 * handle start() will return. The task runner persists the handle here, so a task never runs
 * without a durable record of its process (no second copy after an agent crash). When it throws,
 * start() kills the held process and rejects with that error.
 */
export type BeforeRun = (handle: TaskHandle) => void | Promise<void>;

/**
 * A command running inside a task through its driver (`alloc exec` into a docker task: the
 * Engine's exec API). Its output streams end when the command has ended.
 */
export interface TaskExecProcess {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** The command's exit code, once it has ended and its output was delivered. */
  exited: Promise<number>;
  /** The terminal's new size (a TTY exec); a no-op without one. */
  resize(height: number, width: number): Promise<void>;
  /** Ends the session's connection (the command gets a hangup on a TTY). */
  kill(): void;
}

/**
 * What a running task uses at one instant: memory as measured, CPU as cumulative counters (the
 * client turns two samples into rates: client/rpc/client_alloc_stats.ts). Fields a source does not
 * measure are 0 and left out of `measured` (Nomad's names: "System Mode", "User Mode", "Throttled
 * Periods", "Throttled Time", "Percent").
 */
export interface TaskUsageSample {
  /** When it was read, Unix nanoseconds (sub-millisecond: rates are taken over short spans). */
  atNs: number;
  memory: MemoryStats;
  cpu: {
    /** CPU time the task's processes used, nanoseconds since an origin fixed for the task. */
    totalNs: number;
    userNs: number;
    systemNs: number;
    throttledPeriods: number;
    throttledTimeNs: number;
    measured: string[];
  };
}

export interface DriverCapabilities {
  /** The driver can bind volumes into a task. Drivers that cannot must refuse mounts clearly. */
  supportsMounts: boolean;
  /**
   * The driver reads its settings from TaskStartConfig.config (docker), so `config.command` is
   * optional (an image has its own). Absent: false (command required, as exec and raw_exec).
   */
  readsConfig?: boolean;
}

export interface TaskDriver {
  readonly name: string;
  capabilities(): DriverCapabilities;
  /**
   * The user a task that names none runs as: "" for the agent's user. `privileged`: the task is a
   * CSI plugin (TaskStartConfig.privileged). Absent: always the agent's user.
   */
  defaultUser?(privileged: boolean): string;
  fingerprint(): Promise<DriverInfo>;
  /**
   * Starts the task: its command runs only after `beforeRun` (when given) returned. A driver that
   * cannot hold a task before it runs may ignore `beforeRun` (the runner then persists the handle
   * once start() returns).
   */
  start(cfg: TaskStartConfig, beforeRun?: BeforeRun): Promise<TaskHandle>;
  /** Resolves when the task exits. Safe to call more than once for one handle. */
  wait(handle: TaskHandle): Promise<ExitResult>;
  /**
   * The task's kill signal (TaskStartConfig.killSignal, kept in its handle; SIGTERM by default) to
   * its process group, SIGKILL after killTimeoutMs; resolves once it is gone.
   */
  stop(handle: TaskHandle, killTimeoutMs: number): Promise<void>;
  /**
   * Re-attaches to a task from a persisted handle; false when the process is gone. A process that
   * never ran the task's command (held at start when its agent died) never will: it is killed and
   * the answer is false (its wait() then reports `notStarted`).
   */
  recover(handle: TaskHandle): Promise<boolean>;
  /**
   * Binds `mount.hostPath` afresh at `mount.taskPath` in the running task, replacing the copy it
   * got at start (a CSI volume published again after its node plugin lost the mount). Rejects with
   * the reason when it cannot; the task keeps running either way. Absent: the driver cannot (a
   * driver without mounts has nothing to refresh).
   */
  refreshMount?(handle: TaskHandle, mount: TaskMount): Promise<void>;
  /**
   * Agent exit: stops watching every task without touching it (tasks outlive the agent and a
   * restarted agent recovers them), so nothing of the driver keeps the process alive. Waits still
   * pending never settle: a task's exit seen after this point is the next agent's to record.
   */
  detach(): void;
  /**
   * Sends `signal` to the running task (`alloc signal`) when the driver has its own way (docker:
   * the Engine's kill of the container's main process). Absent: the client signals the task's
   * command from the host (the children of the handle's process).
   */
  signal?(handle: TaskHandle, signal: string): Promise<void>;
  /**
   * What the running task uses now (`alloc status -stats`). Absent: the driver cannot tell (the
   * client then reports none for the task).
   */
  stats?(handle: TaskHandle): Promise<TaskUsageSample>;
  /**
   * Runs `command` inside the running task (`alloc exec`), when the driver has its own way in
   * (docker's exec API). Absent: the client runs it from the host (client/rpc/task_process.ts).
   */
  exec?(
    handle: TaskHandle,
    command: string[],
    opts: { tty: boolean; height: number; width: number },
  ): Promise<TaskExecProcess>;
}
