/**
 * What a TaskRunner is given: the task and its alloc, the node's parts it runs against, and where
 * its handle persists across agent restarts. Apart from task_runner.ts so the start config
 * (task_start.ts) reads it without importing the runner.
 */
import type { Logger } from "../../../internal/log.js";
import type { Allocation, TaskEvent, TaskState } from "../../../structs/alloc.js";
import type { Task } from "../../../structs/job.js";
import type { TaskUserPolicy } from "../../../structs/task_user.js";
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import type { TaskDriver, TaskHandle } from "../../drivers/driver.js";
import type { PluginRegistrar } from "../../dynamicplugins/types.js";
import type { CsiMount } from "../hook_resources.js";
import type { PluginDirs } from "./plugin_dirs.js";
import type { PluginSupervisorOptions } from "./plugin_supervisor_hook.js";
import type { TaskNode } from "./task_env.js";

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
  /** Which users tasks may run as (client options user.denylist / user.checked_drivers); absent: Nomad's defaults. */
  taskUsers?: TaskUserPolicy;
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
