/**
 * prerun's half of the csi_hook (DESIGN step 5): claims and mounts the alloc's CSI volumes.
 *
 * For each volume request of the alloc's group, in alias order: a persisted stub of the same volume
 * whose target is still mounted is reused (agent restart: no new claim, no remount). Otherwise:
 * look up the volume's node plugin on the server (the stub's, when there is one), wait for that
 * plugin to register (up to the plugin wait; one that stays missing fails the prerun naming it,
 * before any claim), claim through the server (retrying "in use"/"max claims" and transient errors
 * with 1 s → 1 min backoff until a long deadline; every retry is a "Volume Claim Retry" event),
 * stage+publish through the volume manager, persist the stub. A restored alloc's tasks get a lost
 * mount's new copy bound in (`refreshTaskMounts`). The mounts go to the tasks in one
 * `setCsiMounts`. On failure, what this prerun claimed or mounted is released (csi_release.ts: the
 * node step first when the mount step began, then CSIVolume.Unpublish) within the unwind budget
 * before the error surfaces; what is left stays pending for postrun.
 */
import { retryWithBackoff } from "../../internal/backoff.js";
import { anySignal } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { allocIndex, type Allocation } from "../../structs/alloc.js";
import {
  BerthError,
  asBerthError,
  isBerthError,
  isClaimRetryable,
  isRetryable,
} from "../../structs/errors.js";
import { volumeSourceForAlloc, type VolumeRequest } from "../../structs/job.js";
import type { VolumeClaimResponse } from "../../structs/rpc.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import { volumePaths } from "../csimanager/paths.js";
import type { CsiVolumeStub, PendingRelease, VolumeUsage } from "../state/types.js";
import type { CsiMount } from "./hook_resources.js";
import type { CsiReleaser } from "./csi_release.js";
import {
  csiRequests,
  pluginWaitMs,
  rpcTimeoutMs,
  type Claimed,
  type CsiBackoff,
  type CsiHookConfig,
} from "./csi_types.js";
import { formatMs } from "./taskrunner/restart_tracker.js";
import { mergeMountOptions } from "../../structs/mount_options_merge.js";

/** A volume this prerun claimed, and its stub once mounted: exactly what a failure must undo. */
interface Acquired {
  alias: string;
  stub: CsiVolumeStub;
  /**
   * Set once the mount step started: from then on a failure may have left the volume staged or
   * published (a NodeStage that timed out, a publish whose cleanup could not reach the plugin), so
   * the release must go through the node plugin before the claim is freed.
   */
  mountStarted: boolean;
}

export interface CsiClaimerDeps {
  cfg: CsiHookConfig;
  backoff: CsiBackoff;
  log: Logger;
  releaser: CsiReleaser;
  /** Agent shutdown: no unwind after it (a restart resumes from the pending records). */
  shutdown: AbortSignal;
  /** Claims made by this agent, by alias (shared with the remount, which needs their context). */
  claimed: Map<string, Claimed>;
  /** See CsiHookConfig.refreshTaskMounts; never throws. */
  refreshTaskMounts: (alias: string, hostPath: string) => Promise<boolean>;
}

export class CsiClaimer {
  constructor(private readonly d: CsiClaimerDeps) {}

  /** Claims and mounts every CSI volume of the alloc; answers the mounts by alias. */
  async claimAndMount(alloc: Allocation, signal: AbortSignal): Promise<Map<string, CsiMount> | null> {
    const requests = csiRequests(alloc);
    if (requests.length === 0) return null;
    const { cfg, log } = this.d;
    const sig = anySignal([signal, this.d.shutdown]);
    const stubs = cfg.store.getVolumeStubs(alloc.ID);
    const mounts = new Map<string, CsiMount>();
    const acquired: Acquired[] = [];
    for (const [alias, req] of requests) {
      const volumeId = volumeSourceForAlloc(req, allocIndex(alloc));
      try {
        const restored = stubs[alias];
        if (restored && restored.volumeId === volumeId && (await cfg.volumeManager.isPublished(restored))) {
          log.info("volume still mounted, reusing it", { alias, volume: volumeId });
          mounts.set(alias, { source: restored.targetPath, readOnly: req.ReadOnly, volumeId });
          continue;
        }
        const known = restored?.volumeId === volumeId ? restored : undefined;
        const mount = await this.acquire(alloc, alias, req, volumeId, known, acquired, sig);
        mounts.set(alias, mount);
        // A restored alloc's tasks may still run with a stale copy of the lost mount.
        if (known) await this.d.refreshTaskMounts(alias, mount.source);
      } catch (err) {
        const e = asBerthError(err);
        if (!this.d.shutdown.aborted) await this.unwind(alloc.ID, acquired);
        throw new BerthError(e.code, `volume "${alias}" (${volumeId}): ${e.message}`, { cause: err });
      }
    }
    return mounts;
  }

  /** The same alloc's claim again (idempotent on the server): the volume's context and secrets. */
  async reclaim(
    alloc: Allocation,
    alias: string,
    stub: CsiVolumeStub,
    signal: AbortSignal,
  ): Promise<Claimed> {
    const resp = await this.claim(alloc, stub.volumeId, stub.pluginId, stub.usage, signal);
    const claimed = { volume: resp.Volume, publishContext: resp.PublishContext };
    this.d.claimed.set(alias, claimed);
    return claimed;
  }

  private async acquire(
    alloc: Allocation,
    alias: string,
    req: VolumeRequest,
    volumeId: string,
    restored: CsiVolumeStub | undefined,
    acquired: Acquired[],
    signal: AbortSignal,
  ): Promise<CsiMount> {
    if (!req.AccessMode || !req.AttachmentMode) {
      throw new BerthError("ERR_VALIDATION", "access_mode and attachment_mode are required for CSI volumes");
    }
    const usage: VolumeUsage = {
      readOnly: req.ReadOnly,
      accessMode: req.AccessMode,
      attachmentMode: req.AttachmentMode,
    };
    // The node plugin first (DESIGN step 5): an alloc whose plugin is still recovering waits for it
    // up to the plugin wait, and one whose plugin stays missing fails naming it, without a claim.
    const pluginId = restored?.pluginId ?? (await this.volumePluginId(alloc, volumeId, signal));
    let plugin = await this.waitForNodePlugin(pluginId, signal);
    const claim = await this.claim(alloc, volumeId, pluginId, usage, signal);
    const vol = claim.Volume;
    this.d.claimed.set(alias, { volume: vol, publishContext: claim.PublishContext });
    const entry: Acquired = {
      alias,
      mountStarted: false,
      stub: {
        volumeId: vol.ID,
        namespace: vol.Namespace,
        pluginId: vol.PluginID,
        externalId: vol.ExternalID,
        usage,
        stagingPath: "",
        targetPath: "",
      },
    };
    acquired.push(entry);
    // Only a volume re-registered under another plugin since the lookup gets here with another ID.
    if (vol.PluginID !== plugin.pluginId) plugin = await this.waitForNodePlugin(vol.PluginID, signal);
    return this.mount(alloc, { alias, req, usage, claim, entry }, plugin, signal);
  }

  /**
   * The mount step of a claimed volume: stage and publish through the volume manager (retried
   * there while the target is not mounted), the stub persisted once mounted. `entry` records how
   * far it got, for the release of a failed acquire.
   */
  private async mount(
    alloc: Allocation,
    c: { alias: string; req: VolumeRequest; usage: VolumeUsage; claim: VolumeClaimResponse; entry: Acquired },
    plugin: RegisteredPlugin,
    signal: AbortSignal,
  ): Promise<CsiMount> {
    const { cfg } = this.d;
    const { alias, req, usage, claim, entry } = c;
    const vol = claim.Volume;
    // Where the mount step stages and publishes: what a release without the plugin must find
    // unmounted before it may skip the node step.
    const paths = volumePaths(
      plugin,
      { namespace: vol.Namespace, volumeId: vol.ID, allocId: alloc.ID },
      usage,
    );
    entry.stub = { ...entry.stub, stagingPath: paths.hostStagingPath, targetPath: paths.hostTargetPath };
    entry.mountStarted = true;
    const mounted = await cfg.volumeManager.mountVolume(
      {
        plugin,
        volume: vol,
        allocId: alloc.ID,
        usage: { ...usage, mountOptions: mergeMountOptions(vol.MountOptions, req.MountOptions) },
        publishContext: claim.PublishContext,
        onNotMounted: (err) =>
          cfg.emitEvent?.(
            "Volume Mount Retry",
            `volume "${alias}" (${vol.ID}): ${err.message}; the task waits and the mount is retried`,
            { volume: vol.ID, plugin: vol.PluginID, error_code: err.code },
          ),
      },
      signal,
    );
    entry.stub = mounted.stub;
    cfg.store.putVolumeStubs(alloc.ID, { [alias]: mounted.stub });
    // Mounted on this node again: an earlier escalated release of it no longer needs attention.
    cfg.attention?.clearVolumeAttention(vol.Namespace, vol.ID);
    this.d.log.info("volume mounted", { alias, volume: vol.ID, source: mounted.source });
    return { source: mounted.source, readOnly: req.ReadOnly, volumeId: vol.ID };
  }

  private waitForNodePlugin(pluginId: string, signal: AbortSignal): Promise<RegisteredPlugin> {
    return this.d.cfg.registry.waitForPlugin("csi-node", pluginId, {
      signal,
      timeoutMs: pluginWaitMs(this.d.cfg),
    });
  }

  /** Which plugin serves the volume (the server knows; transient errors are retried). */
  private async volumePluginId(alloc: Allocation, volumeId: string, signal: AbortSignal): Promise<string> {
    const { cfg } = this.d;
    const resp = await retryWithBackoff(
      () =>
        cfg.rpc.call(
          "CSIVolume.GetForNode",
          { VolumeID: volumeId, Namespace: alloc.Namespace, NodeID: cfg.nodeId, AllocationID: alloc.ID },
          { signal, timeoutMs: rpcTimeoutMs(cfg) },
        ),
      {
        ...this.d.backoff,
        deadlineMs: cfg.claimRetryDeadlineMs ?? 24 * 3600_000,
        signal,
        shouldRetry: (err) => isBerthError(err) && isRetryable(err.code),
      },
    );
    return resp.PluginID;
  }

  /**
   * CSIVolume.Claim, retried while the server refuses it for now. Before each attempt the node
   * plugin must be registered here: one that went away meanwhile (its task stopped, e.g. a restored
   * plugin whose job was stopped while the agent was down) is waited for again up to the plugin
   * wait, and one that stays missing ends the claim with the error naming it — never a day of
   * refused claims for a plugin this node no longer runs.
   */
  private claim(
    alloc: Allocation,
    volumeId: string,
    pluginId: string,
    usage: VolumeUsage,
    signal: AbortSignal,
  ): Promise<VolumeClaimResponse> {
    const { cfg, log } = this.d;
    let pluginMissing: unknown = null;
    return retryWithBackoff(
      async () => {
        if (!cfg.registry.get("csi-node", pluginId)) {
          try {
            await this.waitForNodePlugin(pluginId, signal);
          } catch (err) {
            pluginMissing = err;
            throw err;
          }
        }
        return cfg.rpc.call(
          "CSIVolume.Claim",
          {
            VolumeID: volumeId,
            Namespace: alloc.Namespace,
            AllocationID: alloc.ID,
            NodeID: cfg.nodeId,
            Mode: usage.readOnly ? "read" : "write",
            AccessMode: usage.accessMode,
            AttachmentMode: usage.attachmentMode,
          },
          { signal, timeoutMs: rpcTimeoutMs(cfg) },
        );
      },
      {
        ...this.d.backoff,
        deadlineMs: cfg.claimRetryDeadlineMs ?? 24 * 3600_000,
        signal,
        shouldRetry: (err) => err !== pluginMissing && isBerthError(err) && isClaimRetryable(err.code),
        onRetry: (err, attempt, delayMs) => {
          const message = asBerthError(err).message;
          log.warn("volume claim refused, retrying", {
            volume: volumeId,
            error: message,
            attempt: attempt + 1,
            delayMs,
          });
          cfg.emitEvent?.(
            "Volume Claim Retry",
            `claim of volume ${JSON.stringify(volumeId)} failed (${message}); retry ${attempt + 1} in ${formatMs(delayMs)}`,
            { volume: volumeId, error_code: asBerthError(err).code, attempt: String(attempt + 1) },
          );
        },
      },
    );
  }

  /** Releases what a failed prerun acquired, newest first; leftovers stay pending for postrun. */
  private async unwind(allocId: string, acquired: Acquired[]): Promise<void> {
    const { cfg } = this.d;
    for (const a of [...acquired].reverse()) {
      // Unmounted only if no CSI call was made: NodeUnpublish/NodeUnstage are idempotent, so a
      // volume that may be half-mounted is unmounted (retried until the plugin answers) before
      // CSIVolume.Unpublish frees the claim on the server.
      const rel: PendingRelease = { stub: a.stub, unmounted: !a.mountStarted };
      cfg.store.putPendingRelease(allocId, a.alias, rel);
      try {
        await this.d.releaser.release(
          allocId,
          a.alias,
          rel,
          cfg.unwindDeadlineMs ?? 120_000,
          this.d.shutdown,
        );
      } catch (err) {
        this.d.log.warn("could not release a volume after a failed prerun; postrun retries", {
          alias: a.alias,
          volume: a.stub.volumeId,
          error: asBerthError(err).message,
        });
      }
    }
  }
}
