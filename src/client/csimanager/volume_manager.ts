/**
 * The node side of a volume's life on this node (docs/design.md steps 5 and 7): NodeStage once per
 * volume and usage (reference counted by alloc), NodePublish once per alloc, and the reverse.
 *
 * Contracts:
 * - At most one CSI call per volume is in flight on this node (a keyed mutex on namespace/volume);
 *   different volumes proceed in parallel.
 * - NodeStage/NodeUnstage are called only when the node plugin advertises STAGE_UNSTAGE_VOLUME.
 * - The CO creates the staging directory and the target's parent before the calls; after a
 *   successful unpublish/unstage whatever the plugin left behind is removed (empty dirs only).
 * - Transient errors are retried (csi_retry.ts); NOT_FOUND on unpublish/unstage means "already
 *   released" and counts as success.
 * - volume_context and publish_context reach both NodeStage and NodePublish; secrets are passed to
 *   the plugin and never logged.
 * - A stage or publish counts only once the host path holds the volume (mount_check.ts): a plugin
 *   that answers success without mounting is asked again until the deadline, each time reported
 *   through the request's `onNotMounted`; then what the call created is cleaned up and it fails.
 * The node calls themselves are in node_mount.ts and node_release.ts; this file owns the sequence.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { BerthError, isBerthError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";
import { applyMountGroupAfterPublish, nodeCapabilityOf } from "./mount_group.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { CsiVolumeStub, VolumeUsage } from "../state/types.js";
import { DEFAULT_CSI_RETRY, retryCsiCall, type CsiRetryPolicy } from "./csi_retry.js";
import { KeyedMutex } from "../../internal/keyed_mutex.js";
import type { NodePluginHandle } from "./manager.js";
import { stagingKey, volumeKey, volumePaths } from "./paths.js";
import {
  expandOnNode,
  publishOnNode,
  publishedStub,
  stageWithUndo,
  type NodeMountStep,
} from "./node_mount.js";
import { unpublishOnNode, unstageOnNode } from "./node_release.js";
import { detachVolumeLazily, type DetachedVolume } from "./lazy_detach.js";
import {
  holdsVolume,
  isMountPointOnHost,
  requireMounted,
  type CheckedCall,
  type MountProbe,
} from "./mount_check.js";
import {
  unmountOf,
  type ExpandVolumeRequest,
  type MountVolumeRequest,
  type MountVolumeResult,
  type UnmountGuard,
  type UnmountVolumeRequest,
  type VolumeManagerConfig,
} from "./volume_requests.js";

/** Deadline of each call of the one-shot cleanup after a failed stage or publish. */
const CLEANUP_CALL_TIMEOUT_MS = 30_000;

export class VolumeManager {
  private readonly mutex: KeyedMutex;
  /** Staging key → allocs using that staging. */
  private readonly stagings = new Map<string, Set<string>>();
  /** Staging keys restored from stubs whose mount has not been checked since the restart. */
  private readonly unverified = new Set<string>();
  private readonly retry: CsiRetryPolicy;
  private readonly callTimeoutMs: number;
  private readonly log: Logger;

  constructor(private readonly cfg: VolumeManagerConfig) {
    this.mutex = cfg.locks ?? new KeyedMutex();
    this.retry = cfg.retry ?? DEFAULT_CSI_RETRY;
    this.callTimeoutMs = cfg.callTimeoutMs ?? 5 * 60_000;
    this.log = cfg.log;
  }

  /**
   * Rebuilds the staging reference counts from the stubs persisted before a restart. Restored
   * stagings are unverified: the first publish that relies on one checks that its staging path is
   * still mounted and stages again when it is not (NodeStage is idempotent, so a plugin whose
   * staging is not a mount point is merely asked once more).
   */
  restore(stubs: { allocId: string; stub: CsiVolumeStub }[]): void {
    for (const { allocId, stub } of stubs) {
      const key = stagingKey(stub.pluginId, stub.namespace, stub.volumeId, stub.usage);
      this.users(key).add(allocId);
      if (stub.stagingPath !== "") this.unverified.add(key);
    }
  }

  /** How many allocs on this node use a volume's staging for a usage; for tests and diagnostics. */
  stagingUsers(pluginId: string, namespace: string, volumeId: string, usage: VolumeUsage): string[] {
    return [...(this.stagings.get(stagingKey(pluginId, namespace, volumeId, usage)) ?? [])];
  }

  /**
   * True when a stub's publish target still holds the volume (an agent restart found it in place):
   * a mount point, or for a block volume a device node; an empty directory is not "published".
   */
  isPublished(stub: CsiVolumeStub): Promise<boolean> {
    return holdsVolume(this.probe, "NodePublishVolume", stub.usage.attachmentMode, stub.targetPath);
  }

  private get probe(): MountProbe {
    return {
      isMountPoint: (p) => this.isMountPoint(p),
      isDeviceNode: this.cfg.isDeviceNode,
    };
  }

  /** The check after a stage or publish: throws ERR_CSI_NOT_MOUNTED, reported to the request. */
  private async checkMounted(req: MountVolumeRequest, call: CheckedCall, hostPath: string): Promise<void> {
    try {
      await requireMounted(this.probe, req.plugin.pluginId, call, req.usage.attachmentMode, hostPath);
    } catch (err) {
      if (isBerthError(err)) {
        this.log.warn("plugin reported success but nothing is mounted", { call, path: hostPath });
        req.onNotMounted?.(err);
      }
      throw err;
    }
  }

  /** Whether a host path is a mount point (the configured check, /proc/self/mountinfo by default). */
  private isMountPoint(hostPath: string): Promise<boolean> {
    return (this.cfg.isMountPoint ?? isMountPointOnHost)(hostPath);
  }

  mountVolume(req: MountVolumeRequest, signal?: AbortSignal): Promise<MountVolumeResult> {
    const vol = req.volume;
    return this.mutex.run(volumeKey(vol.Namespace, vol.ID), async () => {
      const node = await this.nodePlugin(vol.PluginID, signal);
      return this.stageAndPublish(node, req, false, signal);
    });
  }

  /** Under the volume's lock: NodeStage unless staged (or `forceStage`), then NodePublish. */
  private async stageAndPublish(
    node: NodePluginHandle,
    req: MountVolumeRequest,
    forceStage: boolean,
    signal?: AbortSignal,
  ): Promise<MountVolumeResult> {
    const vol = req.volume;
    const log = this.log.child("volume").child(vol.ID);
    const paths = volumePaths(
      req.plugin,
      { namespace: vol.Namespace, volumeId: vol.ID, allocId: req.allocId },
      req.usage,
    );
    const capability = nodeCapabilityOf(req.usage, node.capabilities);
    const skey = stagingKey(vol.PluginID, vol.Namespace, vol.ID, req.usage);
    const users = this.users(skey);
    const stages = node.capabilities.stageUnstageVolume;
    const call = { timeoutMs: this.callTimeoutMs, signal };
    const steps: NodeMountStep = {
      node,
      req,
      paths,
      call,
      policy: this.retry,
      log,
      capability,
      checkMounted: (checked, hostPath) => this.checkMounted(req, checked, hostPath),
    };

    if (
      stages &&
      (forceStage || users.size === 0 || (await this.restoredStagingLost(skey, paths.hostStagingPath)))
    ) {
      // Nobody else uses this staging: a failed stage is undone.
      await stageWithUndo(steps, users.size === 0, Math.min(this.callTimeoutMs, CLEANUP_CALL_TIMEOUT_MS));
    }
    this.unverified.delete(skey);
    users.add(req.allocId);

    try {
      await fs.mkdir(path.dirname(paths.hostTargetPath), { recursive: true });
      await publishOnNode(steps, stages);
      await applyMountGroupAfterPublish(paths.hostTargetPath, req.usage, node.capabilities, log, signal);
    } catch (err) {
      await this.cleanupFailedPublish(node, req, log);
      throw err;
    }
    log.info("volume published", { alloc: req.allocId, target: paths.hostTargetPath });
    const stub = publishedStub(req, paths, stages);
    return { source: paths.hostTargetPath, stub };
  }

  /**
   * A failed (or timed-out) publish may have half-happened: release what this call may own. One
   * short attempt: a plugin that is away or hung is not waited for here (under the volume's lock);
   * the csi_hook's release of the claim unmounts again until it answers.
   */
  private async cleanupFailedPublish(
    node: NodePluginHandle,
    req: MountVolumeRequest,
    log: Logger,
  ): Promise<void> {
    await this.releaseLocked(
      node,
      req.plugin,
      unmountOf(req),
      { timeoutMs: Math.min(this.callTimeoutMs, CLEANUP_CALL_TIMEOUT_MS) },
      false,
    ).catch((cleanupErr: unknown) => log.warn("cleanup after failed publish failed", { error: cleanupErr }));
  }

  /**
   * Lost-mount repair (a node plugin restarted, e.g. a FUSE plugin whose mounts died with it): when
   * the alloc's publish target is no longer mounted, stages again if the staging is gone too, then
   * publishes again. A target still mounted is left alone (no CSI call). Returns whether anything
   * was redone. Runs under the volume's lock, so allocs sharing a staging restage it once.
   */
  remountIfLost(req: MountVolumeRequest, signal?: AbortSignal): Promise<boolean> {
    const vol = req.volume;
    return this.mutex.run(volumeKey(vol.Namespace, vol.ID), async () => {
      const paths = volumePaths(
        req.plugin,
        { namespace: vol.Namespace, volumeId: vol.ID, allocId: req.allocId },
        req.usage,
      );
      if (await holdsVolume(this.probe, "NodePublishVolume", req.usage.attachmentMode, paths.hostTargetPath))
        return false;
      const log = this.log.child("volume").child(vol.ID);
      log.warn("published volume is no longer mounted; mounting it again", { alloc: req.allocId });
      const node = await this.nodePlugin(vol.PluginID, signal);
      const stagingLost =
        node.capabilities.stageUnstageVolume && !(await this.isMountPoint(paths.hostStagingPath));
      await this.stageAndPublish(node, req, stagingLost, signal);
      return true;
    });
  }

  /**
   * NodeUnpublish for the alloc, then NodeUnstage when no other alloc uses the staging. Idempotent.
   * With a guard: nothing at all when the guard says someone else already unmounted it.
   */
  unmountVolume(req: UnmountVolumeRequest, signal?: AbortSignal, guard?: UnmountGuard): Promise<void> {
    return this.mutex.run(volumeKey(req.namespace, req.volumeId), async () => {
      if (guard && !guard.stillMounted()) {
        this.log.child("volume").child(req.volumeId).info("already unmounted", { alloc: req.allocId });
        return;
      }
      const node = await this.nodePlugin(req.plugin.pluginId, signal);
      await this.releaseLocked(node, req.plugin, req, { timeoutMs: this.callTimeoutMs, signal }, true);
      guard?.unmounted();
    });
  }

  /**
   * Ends an alloc's use of a volume whose node plugin is gone (it did not come back within the
   * plugin wait), with no CSI call: allowed only when nothing of that use is mounted on this host
   * any more — the alloc's publish target, and the staging when the alloc is its last user — as
   * after a FUSE plugin died and took its mounts with it. Otherwise ERR_CSI_PLUGIN_UNAVAILABLE: a
   * mount is left that only the plugin can undo, and the caller keeps waiting for the plugin.
   * Under the volume's lock; the guard works as for unmountVolume.
   */
  releaseWithoutPlugin(allocId: string, stub: CsiVolumeStub, guard?: UnmountGuard): Promise<void> {
    return this.mutex.run(volumeKey(stub.namespace, stub.volumeId), async () => {
      if (guard && !guard.stillMounted()) return;
      const skey = stagingKey(stub.pluginId, stub.namespace, stub.volumeId, stub.usage);
      const users = this.users(skey);
      const lastUser = [...users].every((a) => a === allocId);
      const stillMounted =
        (stub.targetPath !== "" && (await this.isMountPoint(stub.targetPath))) ||
        (lastUser && stub.stagingPath !== "" && (await this.isMountPoint(stub.stagingPath)));
      if (stillMounted) {
        throw new BerthError(
          "ERR_CSI_PLUGIN_UNAVAILABLE",
          `CSI node plugin ${JSON.stringify(stub.pluginId)} is not running on this node, and volume ${JSON.stringify(stub.volumeId)} is still mounted: only the plugin can unmount it`,
        );
      }
      users.delete(allocId);
      if (users.size === 0) {
        this.stagings.delete(skey);
        this.unverified.delete(skey);
      }
      guard?.unmounted();
    });
  }

  /**
   * The escalation of a release whose NodeUnpublish/NodeUnstage hung past the bound (lazy_detach.ts):
   * no CSI call; the alloc's target and, for the staging's last user, the staging (the stub's host
   * paths) are detached lazily, and the alloc's use ends as after a release. Under the lock.
   */
  detachHung(allocId: string, stub: CsiVolumeStub, guard?: UnmountGuard): Promise<DetachedVolume> {
    return this.mutex.run(volumeKey(stub.namespace, stub.volumeId), async () => {
      const skey = stagingKey(stub.pluginId, stub.namespace, stub.volumeId, stub.usage);
      const last = [...this.users(skey)].every((a) => a === allocId);
      const paths = { hostTargetPath: stub.targetPath, hostStagingPath: stub.stagingPath };
      const out = await detachVolumeLazily(paths, last && stub.stagingPath !== "");
      this.users(skey).delete(allocId);
      if (last) [this.stagings, this.unverified].forEach((m) => m.delete(skey));
      guard?.unmounted();
      return out;
    });
  }

  /** After detachHung, tells the plugin (one attempt each); no NodeUnstage of a staging in use again. */
  tellPluginDetached(req: UnmountVolumeRequest, detached: DetachedVolume, signal?: AbortSignal) {
    return this.mutex.run(volumeKey(req.namespace, req.volumeId), async () => {
      const node = await this.cfg.plugins.nodePlugin(req.plugin.pluginId, signal);
      const { plugin, externalId } = req;
      const call = { timeoutMs: this.callTimeoutMs, signal };
      const policy = { ...this.retry, deadlineMs: 0 };
      const steps = { node, plugin, externalId, call, policy, log: this.log };
      await unpublishOnNode({ ...steps, paths: volumePaths(plugin, req, req.usage) });
      const skey = stagingKey(req.plugin.pluginId, req.namespace, req.volumeId, req.usage);
      if (detached.stagingPath === "" || this.users(skey).size > 0) return;
      await unstageOnNode({ ...steps, paths: volumePaths(plugin, req, req.usage) });
    });
  }

  /**
   * NodeExpandVolume for one alloc's published volume, under the volume's lock (never alongside a
   * stage, publish or unmount of it). Answers 0 when the plugin does not expand on the node.
   */
  expandVolume(req: ExpandVolumeRequest, signal?: AbortSignal): Promise<number> {
    const { stub } = req;
    return this.mutex.run(volumeKey(stub.namespace, stub.volumeId), async () => {
      const node = await this.nodePlugin(stub.pluginId, signal);
      if (!node.capabilities.expandVolume) return 0;
      const paths = volumePaths(
        req.plugin,
        { namespace: stub.namespace, volumeId: stub.volumeId, allocId: req.allocId },
        stub.usage,
      );
      const log = this.log.child("volume").child(stub.volumeId);
      const call = { timeoutMs: this.callTimeoutMs, signal };
      const res = await expandOnNode(node, req, paths, call, this.retry, log);
      log.info("volume expanded on node", { alloc: req.allocId, capacity: res.capacityBytes });
      return res.capacityBytes;
    });
  }

  private async releaseLocked(
    node: NodePluginHandle,
    plugin: RegisteredPlugin,
    req: UnmountVolumeRequest,
    call: { timeoutMs: number; signal?: AbortSignal },
    retry: boolean,
  ): Promise<void> {
    const steps = {
      node,
      plugin,
      externalId: req.externalId,
      paths: volumePaths(
        plugin,
        { namespace: req.namespace, volumeId: req.volumeId, allocId: req.allocId },
        req.usage,
      ),
      call,
      policy: retry ? this.retry : { ...this.retry, deadlineMs: 0 },
      log: this.log.child("volume").child(req.volumeId),
      onRetry: req.onRetry,
    };
    await unpublishOnNode(steps);
    steps.log.info("volume unpublished", { alloc: req.allocId });
    const skey = stagingKey(plugin.pluginId, req.namespace, req.volumeId, req.usage);
    const users = this.users(skey);
    users.delete(req.allocId);
    if (users.size > 0) return;
    if (node.capabilities.stageUnstageVolume) {
      await unstageOnNode(steps);
      steps.log.info("volume unstaged");
    }
    this.stagings.delete(skey);
    this.unverified.delete(skey);
  }

  /** True when a staging restored from stubs is in use but its mount went away (e.g. a reboot). */
  private async restoredStagingLost(skey: string, hostStagingPath: string): Promise<boolean> {
    if (!this.unverified.has(skey)) return false;
    const lost = !(await this.isMountPoint(hostStagingPath));
    if (lost)
      this.log.warn("restored staging is no longer mounted; staging again", { path: hostStagingPath });
    return lost;
  }

  private nodePlugin(pluginId: string, signal?: AbortSignal): Promise<NodePluginHandle> {
    return retryCsiCall(
      "finding the node plugin",
      () => this.cfg.plugins.nodePlugin(pluginId, signal),
      this.retry,
      this.log,
      signal,
    );
  }

  private users(key: string): Set<string> {
    let set = this.stagings.get(key);
    if (!set) {
      set = new Set();
      this.stagings.set(key, set);
    }
    return set;
  }
}
