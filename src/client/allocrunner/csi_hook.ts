/**
 * csi_hook: claims, mounts and releases the alloc's CSI volumes (DESIGN.md steps 5 and 7).
 *
 * prerun, per volume request of the alloc's group, in order: reuse a persisted stub whose target is
 * still mounted (agent restart: no new claim, no remount); otherwise claim through the server
 * (retrying "in use"/"max claims" and transient errors with 1 s → 1 min backoff until a long
 * deadline), wait for the node plugin, stage+publish through the volume manager, persist the stub.
 * The mounts are handed to the tasks in one `setCsiMounts`. On failure the volumes this prerun
 * claimed or mounted are released (unmount, then CSIVolume.Unpublish) before the error surfaces.
 *
 * While the alloc runs, a LostMountWatcher re-checks its mounts whenever a node plugin they use
 * registers again (the plugin task restarted): a publish target that is gone is staged (if its
 * staging went too) and published again, the running tasks that mount it get the new mount bound
 * in place of their stale copy (`refreshTaskMounts`), and a "Volume Remounted" event goes to every
 * task.
 *
 * Every claim retry is a "Volume Claim Retry" task event, so a waiting alloc says why it waits.
 *
 * postrun: every stub becomes a persisted pending release; each is driven in the background, in
 * parallel: unmount (retried until success), checkpoint, CSIVolume.Unpublish node-detached
 * (transient errors retried), then the stub and the pending record go. Shutdown aborts the
 * background work; a restarted agent's postrun resumes from the pending records. Every failed or
 * waiting release step is a task event and a report to the server (release_reporter.ts).
 */
import { retryWithBackoff } from "../../internal/backoff.js";
import { anySignal, isAbortError } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { allocIndex, allocTaskGroup, type Allocation } from "../../structs/alloc.js";
import {
  BerthError,
  asBerthError,
  isBerthError,
  isClaimRetryable,
  isRetryable,
} from "../../structs/errors.js";
import { volumeSourceForAlloc, type VolumeRequest } from "../../structs/job.js";
import type { ClaimedVolume, ServerMethods, VolumeClaimResponse } from "../../structs/rpc.js";
import type { PluginRole, RegisteredPlugin } from "../dynamicplugins/types.js";
import type { RegistryListener } from "../dynamicplugins/registry.js";
import type {
  MountVolumeRequest,
  MountVolumeResult,
  UnmountGuard,
  UnmountVolumeRequest,
} from "../csimanager/volume_manager.js";
import type { CsiVolumeStub, PendingRelease, VolumeUsage } from "../state/types.js";
import type { AllocHookResources, CsiMount } from "./hook_resources.js";
import type { PostrunHook, PrerunHook, ShutdownHook } from "./hooks.js";
import { LostMountWatcher } from "./lost_mount_watcher.js";
import { nodePluginRegistered } from "./plugin_wake.js";
import { volumePaths } from "../csimanager/paths.js";
import { ReleaseReporter, nodeStepOf, type ReleaseRef } from "./release_reporter.js";
import { formatMs } from "./taskrunner/restart_tracker.js";

/** The server RPC as the client calls it (the agent's connection satisfies it). */
export interface ServerRpc {
  call<M extends keyof ServerMethods>(
    method: M,
    req: ServerMethods[M][0],
    opts?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<ServerMethods[M][1]>;
}

export interface CsiHookRegistry {
  get(role: PluginRole, pluginId: string): RegisteredPlugin | undefined;
  waitForPlugin(
    role: PluginRole,
    pluginId: string,
    opts: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<RegisteredPlugin>;
  subscribe(listener: RegistryListener): () => void;
}

export interface CsiHookVolumeManager {
  mountVolume(req: MountVolumeRequest, signal?: AbortSignal): Promise<MountVolumeResult>;
  unmountVolume(req: UnmountVolumeRequest, signal?: AbortSignal, guard?: UnmountGuard): Promise<void>;
  releaseWithoutPlugin(allocId: string, stub: CsiVolumeStub, guard?: UnmountGuard): Promise<void>;
  isPublished(stub: CsiVolumeStub): Promise<boolean>;
  remountIfLost(req: MountVolumeRequest, signal?: AbortSignal): Promise<boolean>;
}

export interface CsiHookStore {
  getVolumeStubs(allocId: string): Record<string, CsiVolumeStub>;
  putVolumeStubs(allocId: string, stubs: Record<string, CsiVolumeStub>): void;
  deleteVolumeStub(allocId: string, alias: string): void;
  getPendingReleases(allocId: string): Record<string, PendingRelease>;
  putPendingRelease(allocId: string, alias: string, release: PendingRelease): void;
  completeRelease(allocId: string, alias: string): void;
}

export interface CsiBackoff {
  baseMs: number;
  maxMs: number;
  jitter?: number;
}

export interface CsiHookConfig {
  alloc: () => Allocation;
  nodeId: string;
  rpc: ServerRpc;
  registry: CsiHookRegistry;
  volumeManager: CsiHookVolumeManager;
  store: CsiHookStore;
  hookResources: AllocHookResources;
  log: Logger;
  /** How long claims are retried while the volume is held elsewhere; 24 h by default. */
  claimRetryDeadlineMs?: number;
  /** How long to wait for the node plugin to register; 5 min by default. */
  pluginWaitTimeoutMs?: number;
  /** Backoff for claims and releases; 1 s → 1 min by default. */
  backoff?: CsiBackoff;
  /** Deadline of each server RPC; 1 min by default. */
  rpcTimeoutMs?: number;
  /** Budget for releasing what a failed prerun claimed before postrun takes over; 2 min by default. */
  unwindDeadlineMs?: number;
  /** An event for every task of the alloc (claim retries, remounts). */
  emitEvent?: (type: string, message: string, details?: Record<string, string>) => void;
  /**
   * A lost volume was published again at `hostPath` (the stub's target path, which tasks mount):
   * the alloc's running tasks re-bind it. Reports per-task failures itself (as task events) and
   * answers false then.
   */
  refreshTaskMounts?: (hostPath: string) => Promise<boolean>;
  /** The node's owner of plugin dirs: a completed release may leave a plugin dir unused. */
  pluginDirs?: CsiHookPluginDirs;
}

/** See PluginDirs.volumeReleased (taskrunner/plugin_dirs.ts). */
export interface CsiHookPluginDirs {
  volumeReleased(stub: CsiVolumeStub): Promise<void>;
}

/** What this agent got from its claim of a volume: enough to publish it again. */
interface Claimed {
  volume: ClaimedVolume;
  publishContext: Record<string, string>;
}

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

export class CsiHook implements PrerunHook, PostrunHook, ShutdownHook {
  readonly name = "csi_hook";
  private readonly shutdownCtl = new AbortController();
  private readonly backoff: CsiBackoff;
  private readonly log: Logger;
  /** Claims made by this agent, by alias; a restored mount has none until a remount needs one. */
  private readonly claimed = new Map<string, Claimed>();
  private watcher: LostMountWatcher | null = null;
  private readonly reporter: ReleaseReporter;

  constructor(private readonly cfg: CsiHookConfig) {
    this.backoff = cfg.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    this.log = cfg.log.child("csi_hook");
    this.reporter = new ReleaseReporter({
      rpc: cfg.rpc,
      nodeId: cfg.nodeId,
      log: this.log,
      ...(cfg.emitEvent ? { emitEvent: cfg.emitEvent } : {}),
    });
  }

  async prerun(signal: AbortSignal): Promise<void> {
    const alloc = this.cfg.alloc();
    const requests = csiRequests(alloc);
    if (requests.length === 0) return;
    const sig = anySignal([signal, this.shutdownCtl.signal]);
    const stubs = this.cfg.store.getVolumeStubs(alloc.ID);
    const mounts = new Map<string, CsiMount>();
    const acquired: Acquired[] = [];
    for (const [alias, req] of requests) {
      const volumeId = volumeSourceForAlloc(req, allocIndex(alloc));
      try {
        const restored = stubs[alias];
        if (
          restored &&
          restored.volumeId === volumeId &&
          (await this.cfg.volumeManager.isPublished(restored))
        ) {
          this.log.info("volume still mounted, reusing it", { alias, volume: volumeId });
          mounts.set(alias, { source: restored.targetPath, readOnly: req.ReadOnly, volumeId });
          continue;
        }
        const known = restored?.volumeId === volumeId ? restored : undefined;
        const mount = await this.acquire(alloc, alias, req, volumeId, known, acquired, sig);
        mounts.set(alias, mount);
        // A restored alloc's tasks may still run with a stale copy of the lost mount.
        if (known) await this.refreshTaskMounts(alias, mount.source);
      } catch (err) {
        const e = asBerthError(err);
        if (!this.shutdownCtl.signal.aborted) await this.unwind(alloc.ID, acquired);
        throw new BerthError(e.code, `volume "${alias}" (${volumeId}): ${e.message}`, { cause: err });
      }
    }
    this.cfg.hookResources.setCsiMounts(mounts);
    this.watchForLostMounts(alloc.ID);
  }

  async postrun(): Promise<{ background?: Promise<void> }> {
    // No remount may race the release: stop the watcher and let a check in progress end first.
    await this.watcher?.stop();
    const allocId = this.cfg.alloc().ID;
    const pending = this.cfg.store.getPendingReleases(allocId);
    for (const [alias, stub] of Object.entries(this.cfg.store.getVolumeStubs(allocId))) {
      if (!pending[alias]) this.cfg.store.putPendingRelease(allocId, alias, { stub, unmounted: false });
    }
    const releases = Object.entries(this.cfg.store.getPendingReleases(allocId));
    if (releases.length === 0) return {};
    const signal = this.shutdownCtl.signal;
    const background = Promise.all(
      releases.map(([alias, rel]) => this.release(allocId, alias, rel, Infinity, signal)),
    ).then(
      () => this.log.info("volumes released", { alloc: allocId, count: releases.length }),
      (err: unknown) => {
        if (isAbortError(err) || signal.aborted) {
          this.log.info("volume release interrupted by shutdown; a restart resumes it", { alloc: allocId });
          return;
        }
        throw err;
      },
    );
    return { background };
  }

  shutdown(): void {
    this.shutdownCtl.abort(new BerthError("ERR_ABORTED", "agent shutting down"));
    void this.watcher?.stop();
  }

  private watchForLostMounts(allocId: string): void {
    if (this.shutdownCtl.signal.aborted) return;
    const stubs = this.cfg.store.getVolumeStubs(allocId);
    this.watcher = new LostMountWatcher({
      registry: this.cfg.registry,
      pluginIds: new Set(Object.values(stubs).map((s) => s.pluginId)),
      check: (pluginId, signal) =>
        this.remountLost(allocId, pluginId, anySignal([signal, this.shutdownCtl.signal])),
      log: this.log,
    });
    this.watcher.start();
  }

  /** Publishes again (staging first when needed) every mount of `pluginId` that is gone. */
  private async remountLost(allocId: string, pluginId: string, signal: AbortSignal): Promise<void> {
    const alloc = this.cfg.alloc();
    const requests = new Map(csiRequests(alloc));
    for (const [alias, stub] of Object.entries(this.cfg.store.getVolumeStubs(allocId))) {
      if (stub.pluginId !== pluginId) continue;
      if (await this.cfg.volumeManager.isPublished(stub)) continue;
      const plugin = this.cfg.registry.get("csi-node", pluginId);
      // Gone again already: its next registration runs this check once more.
      if (!plugin) return;
      const req = requests.get(alias);
      const claimed = this.claimed.get(alias) ?? (await this.reclaim(alloc, alias, stub, signal));
      const redone = await this.cfg.volumeManager.remountIfLost(
        {
          plugin,
          volume: claimed.volume,
          allocId,
          usage: { ...stub.usage, mountOptions: req?.MountOptions ?? claimed.volume.MountOptions },
          publishContext: claimed.publishContext,
        },
        signal,
      );
      if (!redone) continue;
      this.log.info("lost volume mount restored", { alias, volume: stub.volumeId, plugin: pluginId });
      // One outcome per remount: a task that could not get the new mount has said so in its own
      // "Volume Refresh Failed" event, so no "Volume Remounted" claims the opposite.
      if (!(await this.refreshTaskMounts(alias, stub.targetPath))) {
        this.log.warn("volume mounted again on the host, but not every running task has the new mount", {
          alias,
          volume: stub.volumeId,
        });
        continue;
      }
      this.cfg.emitEvent?.(
        "Volume Remounted",
        `volume "${alias}" (${stub.volumeId}) was no longer mounted after plugin ${JSON.stringify(pluginId)} registered again; mounted it again and bound the new mount into the running tasks that use it`,
        { volume: stub.volumeId, plugin: pluginId },
      );
    }
  }

  /** The running tasks' copies of a remounted volume are stale: they get the new mount. */
  private async refreshTaskMounts(alias: string, hostPath: string): Promise<boolean> {
    try {
      return (await this.cfg.refreshTaskMounts?.(hostPath)) ?? true;
    } catch (err) {
      this.log.error("refreshing a remounted volume in the tasks failed", { alias, error: err });
      return false;
    }
  }

  /** The same alloc's claim again (idempotent on the server): the volume's context and secrets. */
  private async reclaim(
    alloc: Allocation,
    alias: string,
    stub: CsiVolumeStub,
    signal: AbortSignal,
  ): Promise<Claimed> {
    const resp = await this.claim(alloc, stub.volumeId, stub.usage, signal);
    const claimed = { volume: resp.Volume, publishContext: resp.PublishContext };
    this.claimed.set(alias, claimed);
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
    const claim = await this.claim(alloc, volumeId, usage, signal);
    const vol = claim.Volume;
    this.claimed.set(alias, { volume: vol, publishContext: claim.PublishContext });
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
    // Where the mount step stages and publishes: what a release without the plugin must find
    // unmounted before it may skip the node step.
    const paths = volumePaths(
      plugin,
      { namespace: vol.Namespace, volumeId: vol.ID, allocId: alloc.ID },
      usage,
    );
    entry.stub = { ...entry.stub, stagingPath: paths.hostStagingPath, targetPath: paths.hostTargetPath };
    entry.mountStarted = true;
    const mounted = await this.cfg.volumeManager.mountVolume(
      {
        plugin,
        volume: vol,
        allocId: alloc.ID,
        usage: { ...usage, mountOptions: req.MountOptions ?? vol.MountOptions },
        publishContext: claim.PublishContext,
        onNotMounted: (err) =>
          this.cfg.emitEvent?.(
            "Volume Mount Retry",
            `volume "${alias}" (${vol.ID}): ${err.message}; the task waits and the mount is retried`,
            { volume: vol.ID, plugin: vol.PluginID, error_code: err.code },
          ),
      },
      signal,
    );
    entry.stub = mounted.stub;
    this.cfg.store.putVolumeStubs(alloc.ID, { [alias]: mounted.stub });
    this.log.info("volume mounted", { alias, volume: vol.ID, source: mounted.source });
    return { source: mounted.source, readOnly: req.ReadOnly, volumeId: vol.ID };
  }

  private waitForNodePlugin(pluginId: string, signal: AbortSignal): Promise<RegisteredPlugin> {
    return this.cfg.registry.waitForPlugin("csi-node", pluginId, {
      signal,
      timeoutMs: this.pluginWaitMs(),
    });
  }

  private pluginWaitMs(): number {
    return this.cfg.pluginWaitTimeoutMs ?? 5 * 60_000;
  }

  /** Which plugin serves the volume (the server knows; transient errors are retried). */
  private async volumePluginId(alloc: Allocation, volumeId: string, signal: AbortSignal): Promise<string> {
    const resp = await retryWithBackoff(
      () =>
        this.cfg.rpc.call(
          "CSIVolume.GetForNode",
          { VolumeID: volumeId, Namespace: alloc.Namespace, NodeID: this.cfg.nodeId },
          { signal, timeoutMs: this.cfg.rpcTimeoutMs ?? 60_000 },
        ),
      {
        ...this.backoff,
        deadlineMs: this.cfg.claimRetryDeadlineMs ?? 24 * 3600_000,
        signal,
        shouldRetry: (err) => isBerthError(err) && isRetryable(err.code),
      },
    );
    return resp.PluginID;
  }

  private claim(
    alloc: Allocation,
    volumeId: string,
    usage: VolumeUsage,
    signal: AbortSignal,
  ): Promise<VolumeClaimResponse> {
    return retryWithBackoff(
      () =>
        this.cfg.rpc.call(
          "CSIVolume.Claim",
          {
            VolumeID: volumeId,
            Namespace: alloc.Namespace,
            AllocationID: alloc.ID,
            NodeID: this.cfg.nodeId,
            Mode: usage.readOnly ? "read" : "write",
            AccessMode: usage.accessMode,
            AttachmentMode: usage.attachmentMode,
          },
          { signal, timeoutMs: this.cfg.rpcTimeoutMs ?? 60_000 },
        ),
      {
        ...this.backoff,
        deadlineMs: this.cfg.claimRetryDeadlineMs ?? 24 * 3600_000,
        signal,
        shouldRetry: (err) => isBerthError(err) && isClaimRetryable(err.code),
        onRetry: (err, attempt, delayMs) => {
          const message = asBerthError(err).message;
          this.log.warn("volume claim refused, retrying", {
            volume: volumeId,
            error: message,
            attempt: attempt + 1,
            delayMs,
          });
          this.cfg.emitEvent?.(
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
    for (const a of [...acquired].reverse()) {
      // Unmounted only if no CSI call was made: NodeUnpublish/NodeUnstage are idempotent, so a
      // volume that may be half-mounted is unmounted (retried until the plugin answers) before
      // CSIVolume.Unpublish frees the claim on the server.
      const rel: PendingRelease = { stub: a.stub, unmounted: !a.mountStarted };
      this.cfg.store.putPendingRelease(allocId, a.alias, rel);
      try {
        await this.release(
          allocId,
          a.alias,
          rel,
          this.cfg.unwindDeadlineMs ?? 120_000,
          this.shutdownCtl.signal,
        );
      } catch (err) {
        this.log.warn("could not release a volume after a failed prerun; postrun retries", {
          alias: a.alias,
          volume: a.stub.volumeId,
          error: asBerthError(err).message,
        });
      }
    }
  }

  /**
   * The node plugin a release unmounts through, waiting for it up to the plugin wait; null when it
   * did not come (the release may then go on without it if nothing is left mounted).
   */
  private async nodePluginForRelease(
    pluginId: string,
    signal: AbortSignal,
  ): Promise<RegisteredPlugin | null> {
    try {
      return await this.waitForNodePlugin(pluginId, signal);
    } catch (err) {
      if (isBerthError(err) && err.code === "ERR_CSI_PLUGIN_UNAVAILABLE") return null;
      throw err;
    }
  }

  /** One volume's release; checkpointed so it resumes at the right step. */
  private async release(
    allocId: string,
    alias: string,
    rel: PendingRelease,
    deadlineMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    const { stub } = rel;
    const log = this.log.child(alias);
    const ref: ReleaseRef = { allocId, alias, volumeId: stub.volumeId, namespace: stub.namespace };
    const guard: UnmountGuard = {
      // An operator's `volume detach` may have unmounted it meanwhile (and marked this record).
      stillMounted: () => this.cfg.store.getPendingReleases(allocId)[alias]?.unmounted === false,
      unmounted: () => this.cfg.store.putPendingRelease(allocId, alias, { stub, unmounted: true }),
    };
    if (!rel.unmounted) {
      await retryWithBackoff(
        async () => {
          if (!this.cfg.registry.get("csi-node", stub.pluginId)) {
            this.reporter.waitingForPlugin(ref, stub.pluginId, this.pluginWaitMs());
          }
          const plugin = await this.nodePluginForRelease(stub.pluginId, signal);
          if (!plugin) {
            await this.cfg.volumeManager.releaseWithoutPlugin(allocId, stub, guard);
            log.warn(
              "node plugin missing past the plugin wait and nothing left mounted: released without it",
              {
                volume: stub.volumeId,
                plugin: stub.pluginId,
              },
            );
            this.cfg.emitEvent?.(
              "Volume Released Without Plugin",
              `CSI node plugin ${JSON.stringify(stub.pluginId)} did not come back; volume "${alias}" (${stub.volumeId}) had nothing left mounted on this node, so its node step was skipped`,
              { volume: stub.volumeId, plugin: stub.pluginId },
            );
            return;
          }
          await this.cfg.volumeManager.unmountVolume(
            {
              plugin,
              allocId,
              volumeId: stub.volumeId,
              namespace: stub.namespace,
              externalId: stub.externalId,
              usage: stub.usage,
              // Transient failures retried inside the call are visible too, as they happen.
              onRetry: (err, attempt, delayMs) =>
                this.reporter.retrying(ref, nodeStepOf(err), err, attempt, delayMs),
            },
            signal,
            guard,
          );
        },
        {
          ...this.backoff,
          deadlineMs,
          signal,
          shouldRetry: (err) => !isAbortError(err) && !signal.aborted,
          // A plugin that became healthy again is retried at once, not after the backoff.
          wake: (over) => nodePluginRegistered(this.cfg.registry, stub.pluginId, over),
          onRetry: (err, attempt, delayMs) => {
            log.warn("unmount failed, retrying", {
              error: asBerthError(err).message,
              attempt: attempt + 1,
              delayMs,
            });
            this.reporter.retrying(ref, nodeStepOf(err), err, attempt, delayMs);
          },
        },
      );
    }
    // A late report of the node step must not land after the claim advanced past it.
    await this.reporter.settled(ref);
    try {
      await retryWithBackoff(
        () =>
          this.cfg.rpc.call(
            "CSIVolume.Unpublish",
            {
              VolumeID: stub.volumeId,
              Namespace: stub.namespace,
              AllocationID: allocId,
              NodeID: this.cfg.nodeId,
              State: "node-detached",
            },
            { signal, timeoutMs: this.cfg.rpcTimeoutMs ?? 60_000 },
          ),
        {
          ...this.backoff,
          deadlineMs,
          signal,
          shouldRetry: (err) => isBerthError(err) && isRetryable(err.code),
          onRetry: (err, attempt, delayMs) => {
            log.warn("unpublish request failed, retrying", {
              error: asBerthError(err).message,
              attempt: attempt + 1,
              delayMs,
            });
            this.reporter.retrying(ref, "server-unpublish", err, attempt, delayMs);
          },
        },
      );
    } catch (err) {
      // The server no longer knows the volume or claim: nothing is left to release there.
      if (!(isBerthError(err) && err.code === "ERR_NOT_FOUND")) {
        if (!signal.aborted && !isAbortError(err)) this.reporter.serverTakesOver(ref, err);
        throw err;
      }
    }
    this.cfg.store.completeRelease(allocId, alias);
    log.info("volume released", { volume: stub.volumeId });
    await this.cfg.pluginDirs
      ?.volumeReleased(stub)
      .catch((err: unknown) => log.warn("tearing down an unused plugin dir failed", { error: err }));
  }
}

/** The alloc's group's CSI volume requests, by alias, in a stable order. */
export function csiRequests(alloc: Allocation): [string, VolumeRequest][] {
  const group = allocTaskGroup(alloc);
  if (!group) return [];
  return Object.entries(group.Volumes ?? {})
    .filter(([, v]) => v.Type === "csi")
    .sort(([a], [b]) => a.localeCompare(b));
}
