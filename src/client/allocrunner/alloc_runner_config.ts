/**
 * What an AllocRunner is given: the alloc, the node's CSI parts its csi_hook needs, where it
 * persists, and how it makes the runner of each task (TaskRunnerLike, so tests can fake tasks).
 * Apart from alloc_runner.ts so the runner file holds the lifecycle only.
 */
import type { TaskHandle } from "../drivers/driver.js";
import type { Logger } from "../../internal/log.js";
import type { Allocation, TaskEvent, TaskState } from "../../structs/alloc.js";
import type { Task } from "../../structs/job.js";
import type { AllocClientUpdate } from "../../structs/rpc.js";
import type { AllocDir } from "../allocdir/alloc_dir.js";
import type {
  CsiBackoff,
  CsiAttentionStore,
  CsiHookPluginDirs,
  CsiHookRegistry,
  CsiHookStore,
  CsiHookVolumeManager,
  ServerRpc,
} from "./csi_types.js";
import type { AllocHookResources } from "./hook_resources.js";

export interface TaskRunnerLike {
  run(): Promise<void>;
  kill(reason: string): Promise<void>;
  state(): TaskState;
  /** Agent exit: end background work, leave the task running (run() may then never settle). */
  shutdown(): void;
  /** Appends an event to the task's state (an alloc hook's news, e.g. a volume remounted). */
  emitEvent(type: string, message: string, details?: Record<string, string>): void;
  /**
   * The host mount at `hostPath` (a volume's publish target) was replaced: the running task gets
   * the new one wherever it mounts it. Reports its own failures (as task events) and answers false
   * then; never throws.
   */
  refreshMounts(hostPath: string): Promise<boolean>;
  /**
   * `alloc signal|restart|exec` (ClientAlloc RPCs). Optional so test fakes need not implement
   * them; the real TaskRunner does. `runningHandle` is the running task's process, or null.
   */
  restart?(reason: string): Promise<void>;
  runningHandle?(): TaskHandle | null;
}

export type NewTaskRunner = (args: {
  task: Task;
  allocDir: AllocDir;
  hookResources: AllocHookResources;
  onStateChange: (s: TaskState) => void;
  /** The task's persisted state when the alloc is restored after an agent restart. */
  restoredState?: TaskState;
  /** Events recorded for the task before its runner existed (a new task only). */
  initialEvents?: TaskEvent[];
}) => TaskRunnerLike;

/** What the runner persists; StateDB satisfies it. */
export interface AllocRunnerStore extends CsiHookStore {
  putAlloc(alloc: Allocation): void;
  putAllocClientUpdate(update: AllocClientUpdate): void;
  getAlloc(allocId: string): { clientUpdate: AllocClientUpdate | null } | undefined;
  deleteAlloc(allocId: string): void;
}

export interface AllocRunnerConfig {
  alloc: Allocation;
  dataDir: string;
  node: { id: string; name: string };
  rpc: ServerRpc;
  registry: CsiHookRegistry;
  volumeManager: CsiHookVolumeManager;
  stateDb: AllocRunnerStore;
  newTaskRunner: NewTaskRunner;
  log: Logger;
  onUpdate: (u: AllocClientUpdate) => void;
  claimRetryDeadlineMs?: number;
  pluginWaitTimeoutMs?: number;
  /** Backoff of claims and releases (1 s → 1 min by default); tests shorten it. */
  csiBackoff?: CsiBackoff;
  /** Told when a volume's release completed, to tear down a plugin dir nothing uses any more. */
  pluginDirs?: CsiHookPluginDirs;
  /** See CsiHookConfig.unmountEscalateAfterMs and .attention. */
  unmountEscalateAfterMs?: number;
  csiAttention?: CsiAttentionStore;
}
