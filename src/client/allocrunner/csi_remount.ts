/**
 * Lost-mount repair of the csi_hook (issue 4, item 7), while the alloc runs: a LostMountWatcher
 * re-checks the alloc's mounts whenever a node plugin they use registers again (its task
 * restarted). For each stub of that plugin whose publish target is gone: the claim's context comes
 * from this agent's claim, or from claiming again (idempotent on the server); the volume manager
 * stages again (if the staging went too) and publishes again; the running tasks that mount it get
 * the new mount bound in place of their stale copy (`refreshTaskMounts`), and then a
 * "Volume Remounted" event goes to every task. A task that could not get it reports its own
 * "Volume Refresh Failed" instead, and no "Volume Remounted" contradicts it. `stop()` (postrun,
 * shutdown) ends the watching and waits for a check in progress, so no remount races a release.
 */
import { anySignal } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import type { Allocation } from "../../structs/alloc.js";
import type { CsiVolumeStub } from "../state/types.js";
import { LostMountWatcher } from "./lost_mount_watcher.js";
import { csiRequests, type Claimed, type CsiHookConfig } from "./csi_types.js";
import { mergeMountOptions } from "../../structs/mount_options_merge.js";

export interface CsiRemounterDeps {
  cfg: CsiHookConfig;
  log: Logger;
  shutdown: AbortSignal;
  claimed: Map<string, Claimed>;
  reclaim: (alloc: Allocation, alias: string, stub: CsiVolumeStub, signal: AbortSignal) => Promise<Claimed>;
}

export class CsiRemounter {
  private watcher: LostMountWatcher | null = null;

  constructor(private readonly d: CsiRemounterDeps) {}

  /** Starts watching the plugins of the alloc's persisted stubs (not after shutdown). */
  watch(allocId: string): void {
    if (this.d.shutdown.aborted) return;
    const stubs = this.d.cfg.store.getVolumeStubs(allocId);
    this.watcher = new LostMountWatcher({
      registry: this.d.cfg.registry,
      pluginIds: new Set(Object.values(stubs).map((s) => s.pluginId)),
      check: (pluginId, signal) => this.remountLost(allocId, pluginId, anySignal([signal, this.d.shutdown])),
      log: this.d.log,
    });
    this.watcher.start();
  }

  /** Stops watching; resolves when a check in progress has ended. */
  async stop(): Promise<void> {
    await this.watcher?.stop();
  }

  /** The running tasks' copies of a remounted volume are stale: they get the new mount. */
  async refreshTaskMounts(alias: string, hostPath: string): Promise<boolean> {
    try {
      return (await this.d.cfg.refreshTaskMounts?.(hostPath)) ?? true;
    } catch (err) {
      this.d.log.error("refreshing a remounted volume in the tasks failed", { alias, error: err });
      return false;
    }
  }

  /** Publishes again (staging first when needed) every mount of `pluginId` that is gone. */
  private async remountLost(allocId: string, pluginId: string, signal: AbortSignal): Promise<void> {
    const { cfg, log } = this.d;
    const alloc = cfg.alloc();
    const requests = new Map(csiRequests(alloc));
    for (const [alias, stub] of Object.entries(cfg.store.getVolumeStubs(allocId))) {
      if (stub.pluginId !== pluginId) continue;
      if (await cfg.volumeManager.isPublished(stub)) continue;
      const plugin = cfg.registry.get("csi-node", pluginId);
      // Gone again already: its next registration runs this check once more.
      if (!plugin) return;
      const req = requests.get(alias);
      const claimed = this.d.claimed.get(alias) ?? (await this.d.reclaim(alloc, alias, stub, signal));
      const redone = await cfg.volumeManager.remountIfLost(
        {
          plugin,
          volume: claimed.volume,
          allocId,
          usage: {
            ...stub.usage,
            mountOptions: mergeMountOptions(claimed.volume.MountOptions, req?.MountOptions),
          },
          publishContext: claimed.publishContext,
        },
        signal,
      );
      if (!redone) continue;
      log.info("lost volume mount restored", { alias, volume: stub.volumeId, plugin: pluginId });
      // One outcome per remount: a task that could not get the new mount has said so in its own
      // "Volume Refresh Failed" event, so no "Volume Remounted" claims the opposite.
      if (!(await this.refreshTaskMounts(alias, stub.targetPath))) {
        log.warn("volume mounted again on the host, but not every running task has the new mount", {
          alias,
          volume: stub.volumeId,
        });
        continue;
      }
      cfg.emitEvent?.(
        "Volume Remounted",
        `volume "${alias}" (${stub.volumeId}) was no longer mounted after plugin ${JSON.stringify(pluginId)} registered again; mounted it again and bound the new mount into the running tasks that use it`,
        { volume: stub.volumeId, plugin: pluginId },
      );
    }
  }
}
