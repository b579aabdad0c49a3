/**
 * csi_hook: the alloc runner hook for the alloc's CSI volumes (docs/design.md steps 5 and 7). It only
 * wires its parts together; each states its own contract:
 *
 * - prerun — csi_claim.ts: reuse a persisted stub still mounted, otherwise wait for the node
 *   plugin, claim, stage+publish, persist the stub; hand the mounts to the tasks in one
 *   `setCsiMounts`; on failure release what this prerun acquired. Then lost-mount repair starts.
 * - while the alloc runs — csi_remount.ts: a node plugin that registers again gets the alloc's
 *   lost mounts published again and bound into the running tasks.
 * - postrun — first the repair stops (a check in progress ends first: no remount races the
 *   release), then csi_release.ts: every stub becomes a persisted pending release, each driven in
 *   the background, in parallel, by the step loop around release_decide.ts; every failed or waiting
 *   step is a task event and a report to the server (release_reporter.ts).
 * - shutdown — aborts the claims, remounts and background releases; a restarted agent's postrun
 *   resumes from the pending records.
 */
import type { Logger } from "../../internal/log.js";
import { BerthError } from "../../structs/errors.js";
import type { PostrunHook, PrerunHook, ShutdownHook } from "./hooks.js";
import { ReleaseReporter } from "./release_reporter.js";
import { CsiClaimer } from "./csi_claim.js";
import { CsiReleaser } from "./csi_release.js";
import { CsiRemounter } from "./csi_remount.js";
import type { Claimed, CsiBackoff, CsiHookConfig } from "./csi_types.js";

export {
  csiRequests,
  type CsiBackoff,
  type CsiHookConfig,
  type CsiHookPluginDirs,
  type CsiHookRegistry,
  type CsiHookStore,
  type CsiHookVolumeManager,
  type ServerRpc,
} from "./csi_types.js";

export class CsiHook implements PrerunHook, PostrunHook, ShutdownHook {
  readonly name = "csi_hook";
  private readonly shutdownCtl = new AbortController();
  private readonly claimer: CsiClaimer;
  private readonly releaser: CsiReleaser;
  private readonly remounter: CsiRemounter;

  constructor(private readonly cfg: CsiHookConfig) {
    const backoff: CsiBackoff = cfg.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    const log: Logger = cfg.log.child("csi_hook");
    const reporter = new ReleaseReporter({
      rpc: cfg.rpc,
      nodeId: cfg.nodeId,
      log,
      emitEvent: cfg.emitEvent,
    });
    const shutdown = this.shutdownCtl.signal;
    /** Claims made by this agent, by alias; a restored mount has none until a remount needs one. */
    const claimed = new Map<string, Claimed>();
    this.releaser = new CsiReleaser(cfg, backoff, log, reporter);
    this.remounter = new CsiRemounter({
      cfg,
      log,
      shutdown,
      claimed,
      reclaim: (alloc, alias, stub, signal) => this.claimer.reclaim(alloc, alias, stub, signal),
    });
    this.claimer = new CsiClaimer({
      cfg,
      backoff,
      log,
      releaser: this.releaser,
      shutdown,
      claimed,
      refreshTaskMounts: (alias, hostPath) => this.remounter.refreshTaskMounts(alias, hostPath),
    });
  }

  async prerun(signal: AbortSignal): Promise<void> {
    const alloc = this.cfg.alloc();
    const mounts = await this.claimer.claimAndMount(alloc, signal);
    if (!mounts) return;
    this.cfg.hookResources.setCsiMounts(mounts);
    this.remounter.watch(alloc.ID);
  }

  async postrun(): Promise<{ background?: Promise<void> }> {
    // No remount may race the release: stop the watcher and let a check in progress end first.
    await this.remounter.stop();
    const background = this.releaser.releaseAll(this.cfg.alloc().ID, this.shutdownCtl.signal);
    return background ? { background } : {};
  }

  shutdown(): void {
    this.shutdownCtl.abort(new BerthError("ERR_ABORTED", "agent shutting down"));
    void this.remounter.stop();
  }
}
