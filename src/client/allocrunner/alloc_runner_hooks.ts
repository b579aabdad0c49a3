/**
 * The alloc runner's hooks, in the order prerun runs them (postrun in reverse): the alloc dir,
 * then the CSI claims and mounts. Built from the runner's config and the few callbacks the CSI
 * hook needs back into its runner.
 */
import type { Logger } from "../../internal/log.js";
import type { AllocDir } from "../allocdir/alloc_dir.js";
import { AllocDirHook } from "./alloc_dir_hook.js";
import type { AllocRunnerConfig } from "./alloc_runner_config.js";
import { CsiHook } from "./csi_hook.js";
import type { CsiHookConfig } from "./csi_types.js";
import type { AllocHookResources } from "./hook_resources.js";
import type { AllocHook } from "./hooks.js";

/** What the CSI hook calls back into its runner for. */
export type HookCallbacks = Pick<CsiHookConfig, "alloc" | "emitEvent" | "refreshTaskMounts">;

export function allocHooks(
  cfg: AllocRunnerConfig,
  allocDir: AllocDir,
  hookResources: AllocHookResources,
  taskNames: string[],
  log: Logger,
  cb: HookCallbacks,
): AllocHook[] {
  return [
    new AllocDirHook(allocDir, taskNames),
    new CsiHook({
      ...cb,
      nodeId: cfg.node.id,
      rpc: cfg.rpc,
      registry: cfg.registry,
      volumeManager: cfg.volumeManager,
      store: cfg.stateDb,
      hookResources,
      log,
      claimRetryDeadlineMs: cfg.claimRetryDeadlineMs,
      pluginWaitTimeoutMs: cfg.pluginWaitTimeoutMs,
      backoff: cfg.csiBackoff,
      pluginDirs: cfg.pluginDirs,
      unmountEscalateAfterMs: cfg.unmountEscalateAfterMs,
      attention: cfg.csiAttention,
    }),
  ];
}
