/**
 * How the node agent (client.ts) builds each alloc's runner: the seams' factory when a simulated
 * node gives one, else an AllocRunner whose task runners run through the agent's drivers. Wiring
 * only: every part is the agent's, shared by all its allocs.
 */
import type { Logger } from "../internal/log.js";
import type { Allocation } from "../structs/alloc.js";
import type { AllocRunnerLike } from "./alloc_sync.js";
import { AllocRunner } from "./allocrunner/alloc_runner.js";
import type { PluginDirs } from "./allocrunner/taskrunner/plugin_dirs.js";
import { TaskRunner } from "./allocrunner/taskrunner/task_runner.js";
import type { TaskRunnerConfig } from "./allocrunner/taskrunner/task_runner_config.js";
import type { ClientOptions } from "./client_options.js";
import type { AllocRunnerParts } from "./client_seams.js";
import { probeOnce } from "./csimanager/probe_once.js";
import type { VolumeManager } from "./csimanager/volume_manager.js";
import type { TaskDriver } from "./drivers/driver.js";
import type { PluginRegistry } from "./dynamicplugins/registry.js";
import type { StateDB } from "./state/state_db.js";

export interface RunnerWiring {
  opts: ClientOptions;
  /** The node as tasks see it (`node.*` in templates and constraints). */
  node: TaskRunnerConfig["node"];
  rpc: AllocRunnerParts["rpc"];
  registry: PluginRegistry;
  volumeManager: VolumeManager;
  stateDb: StateDB;
  pluginDirs: PluginDirs;
  log: Logger;
  onUpdate: AllocRunnerParts["onUpdate"];
  driverFor: (name: string) => TaskDriver;
}

/** The node as its tasks see it: the agent's ID, name and fingerprinted attributes, and its options. */
export function taskNodeOf(
  opts: ClientOptions,
  id: string,
  name: string,
  attributes: Record<string, string>,
): TaskRunnerConfig["node"] {
  return {
    id,
    name,
    datacenter: opts.datacenter ?? "dc1",
    nodeClass: opts.nodeClass ?? "",
    attributes,
    meta: opts.meta ?? {},
    hostVolumes: opts.hostVolumes ?? {},
  };
}

/** The parts every alloc's runner gets, whoever builds it. */
function partsOf(w: RunnerWiring, alloc: Allocation): AllocRunnerParts {
  const { opts, node, rpc, registry, volumeManager, stateDb, pluginDirs } = w;
  return {
    ...{ alloc, dataDir: opts.dataDir, node, rpc, registry, volumeManager, stateDb, pluginDirs },
    log: w.log.child("alloc"),
    onUpdate: w.onUpdate,
    pluginWaitTimeoutMs: opts.pluginWaitTimeoutMs,
    claimRetryDeadlineMs: opts.claimRetryDeadlineMs,
    unmountEscalateAfterMs: opts.csiUnmountEscalateAfterMs,
    csiAttention: stateDb,
  };
}

export function runnerFactory(w: RunnerWiring): (alloc: Allocation) => AllocRunnerLike {
  const { opts, node, registry, stateDb, pluginDirs, log } = w;
  return (alloc) =>
    opts.seams?.allocRunnerFactory?.(partsOf(w, alloc)) ??
    new AllocRunner({
      ...partsOf(w, alloc),
      newTaskRunner: ({ task, allocDir, hookResources, onStateChange, restoredState, initialEvents }) =>
        new TaskRunner({
          alloc,
          task,
          allocDir,
          driver: w.driverFor(task.Driver),
          hookResources,
          pluginRegistrar: registry,
          node,
          dataDir: opts.dataDir,
          log: log.child("task").child(task.Name),
          onStateChange,
          csiPlugin: { probe: (socketPath, signal) => probeOnce(socketPath, signal, log) },
          handles: stateDb,
          pluginDirs,
          taskUsers: opts.drivers?.taskUsers ? opts.drivers.taskUsers : undefined,
          restoredState,
          initialEvents,
        }),
    });
}
