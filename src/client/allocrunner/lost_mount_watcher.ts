/**
 * Lost-mount repair for one alloc (issue 4, item 7): while the alloc's volumes are mounted, every
 * (re-)registration of a node plugin they use — the plugin task restarted, or recovered after being
 * unhealthy — triggers a check of the alloc's mounts of that plugin. The check itself (and the
 * re-stage/re-publish of what is gone) is the caller's `check`; this object only decides when to run
 * it: one at a time, in registration order, never after `stop()`. The check reads mount points
 * from mountinfo (csimanager/mount_check.ts), never a stat of the mount, so a mount that hangs (a
 * dead FUSE or NFS server) does not hang it.
 */
import { isAbortError } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import type { RegistryListener } from "../dynamicplugins/registry.js";

export interface LostMountWatcherConfig {
  registry: { subscribe(listener: RegistryListener): () => void };
  /** The node plugins whose registrations matter (the plugins of the alloc's mounted volumes). */
  pluginIds: ReadonlySet<string>;
  /** Checks (and repairs) the alloc's mounts of one plugin; must honour `signal`. */
  check: (pluginId: string, signal: AbortSignal) => Promise<void>;
  log: Logger;
}

export class LostMountWatcher {
  private readonly ctl = new AbortController();
  private unsubscribe: (() => void) | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly cfg: LostMountWatcherConfig) {}

  start(): void {
    if (this.unsubscribe || this.ctl.signal.aborted || this.cfg.pluginIds.size === 0) return;
    this.unsubscribe = this.cfg.registry.subscribe((ev) => {
      if (ev.type !== "register" || ev.plugin.role !== "csi-node") return;
      if (!this.cfg.pluginIds.has(ev.plugin.pluginId)) return;
      this.enqueue(ev.plugin.pluginId);
    });
  }

  /** Stops listening, aborts a check in progress and waits for it to end. Idempotent. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.ctl.abort();
    await this.chain;
  }

  private enqueue(pluginId: string): void {
    const signal = this.ctl.signal;
    this.chain = this.chain.then(async () => {
      if (signal.aborted) return;
      try {
        await this.cfg.check(pluginId, signal);
      } catch (err) {
        if (signal.aborted || isAbortError(err)) return;
        this.cfg.log.error("checking mounts after a plugin registration failed", {
          plugin: pluginId,
          error: err,
        });
      }
    });
  }
}
