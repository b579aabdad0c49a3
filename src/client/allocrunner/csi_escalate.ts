/**
 * Bounded, escalating node unmount (issue 33 item 5, Nomad #10927). A release's node step
 * (NodeUnpublish, NodeUnstage for the last user: csi_release.ts nodePhase) that has not finished
 * `unmountEscalateAfterMs` after it started — a dead NFS server or FUSE daemon hangs the plugin's
 * unmount in the kernel — is escalated:
 *
 * 1. the node step is cancelled (its CSI call is aborted, the volume's lock released);
 * 2. berth itself lazily detaches the alloc's publish target, and the staging when the alloc is its
 *    last user (VolumeManager.detachHung: `umount -l`, no stat of the hung path), and checkpoints
 *    the node step as done, so the release goes on to the server and the claim is freed;
 * 3. the volume's node state is marked as needing attention: a record in the client state DB
 *    (VolumeAttention; the client's `berth.client.csi.volumes_needing_attention` gauge counts them),
 *    a "Volume Unmount Escalated" task event, a warning in the agent log, and the volume's node
 *    condition reported abnormal (CSIVolume.UpdateUsage: `volume status` shows "Node Condition =
 *    abnormal: needs attention: …" with the node's ID);
 * 4. the plugin is told later: NodeUnpublish (and NodeUnstage when the staging was detached) is
 *    retried in the background with the release backoff until the plugin answers, so its own
 *    state converges. That ends when the plugin answers (the record then says `pluginTold`), or at
 *    agent shutdown (a restarted agent does not resume it; the record stays).
 *
 * The bound counts from the start of the node step in this agent process: a restart starts it
 * again. 0 turns escalation off (the release retries until the plugin answers, as before). A node
 * step that spent the bound waiting for a node plugin that did not come back with the volume still
 * mounted is escalated the same way (its mounts are detached; the plugin is told once it returns).
 * The lazy detach takes the volume's lock like every node call: it waits for a stats poll or a
 * mount of the same volume (each bounded by its own deadline), never for the cancelled call.
 */
import { retryWithBackoff } from "../../internal/backoff.js";
import { isAbortError } from "../../internal/abort.js";
import { asBerthError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";
import type { DetachedVolume } from "../csimanager/lazy_detach.js";
import type { UnmountGuard } from "../csimanager/volume_requests.js";
import type { CsiVolumeStub, VolumeAttention } from "../state/types.js";
import type { CsiBackoff, CsiHookConfig } from "./csi_types.js";

/** Default `csi_unmount_escalate_after`: twice the default deadline of one node CSI call. */
export const DEFAULT_UNMOUNT_ESCALATE_AFTER_MS = 10 * 60_000;

/** The release of one alloc's use of a volume, as the escalation sees it. */
export interface EscalatedRelease {
  allocId: string;
  alias: string;
  stub: CsiVolumeStub;
  guard: UnmountGuard;
  log: Logger;
  /** Agent shutdown. */
  signal: AbortSignal;
}

export function unmountEscalateAfterMs(cfg: CsiHookConfig): number {
  return cfg.unmountEscalateAfterMs ?? DEFAULT_UNMOUNT_ESCALATE_AFTER_MS;
}

export class UnmountEscalation {
  constructor(
    private readonly cfg: CsiHookConfig,
    private readonly backoff: CsiBackoff,
  ) {}

  /**
   * Runs the node step (`nodeStep`, given a signal that also fires at the bound) and escalates when
   * the bound fired first. Shutdown (`r.signal`) and the node step's own failures pass through.
   */
  async bounded(r: EscalatedRelease, nodeStep: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const boundMs = unmountEscalateAfterMs(this.cfg);
    if (!(boundMs > 0) || !Number.isFinite(boundMs)) return nodeStep(r.signal);
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(), boundMs);
    try {
      await nodeStep(AbortSignal.any([r.signal, bound.signal]));
      return;
    } catch (err) {
      if (!bound.signal.aborted || r.signal.aborted) throw err;
    } finally {
      clearTimeout(timer);
    }
    await this.escalate(r, boundMs);
  }

  private async escalate(r: EscalatedRelease, boundMs: number): Promise<void> {
    const { stub } = r;
    const detached = await this.cfg.volumeManager.detachHung(r.allocId, stub, r.guard);
    const rec: VolumeAttention = {
      allocId: r.allocId,
      alias: r.alias,
      volumeId: stub.volumeId,
      namespace: stub.namespace,
      pluginId: stub.pluginId,
      targetPath: detached.targetPath,
      stagingPath: detached.stagingPath,
      since: Date.now(),
      pluginTold: false,
    };
    this.cfg.attention?.putVolumeAttention(rec);
    const secs = boundMs / 1000;
    const message = `unmount of volume "${r.alias}" (${stub.volumeId}) did not finish within ${secs}s; berth detached it lazily and it needs attention`;
    r.log.warn("node unmount hung past the bound: detached lazily; the volume needs attention", {
      volume: stub.volumeId,
      plugin: stub.pluginId,
      target: detached.targetPath,
      staging: detached.stagingPath,
    });
    this.cfg.emitEvent?.("Volume Unmount Escalated", message, {
      volume: stub.volumeId,
      plugin: stub.pluginId,
    });
    await this.reportCondition(r, `needs attention: ${message} on this node`);
    // Not awaited: the release goes on; this ends when the plugin answers or at shutdown.
    void this.tellPluginLater(r, rec, detached);
  }

  /** The volume's node condition, abnormal; best effort (the server may refuse or be away). */
  private async reportCondition(r: EscalatedRelease, message: string): Promise<void> {
    const zero = { BytesUsed: 0, BytesAvailable: 0, BytesTotal: 0 };
    const inodes = { InodesUsed: 0, InodesAvailable: 0, InodesTotal: 0 };
    const volume = { VolumeID: r.stub.volumeId, Namespace: r.stub.namespace, ...zero, ...inodes };
    try {
      await this.cfg.rpc.call(
        "CSIVolume.UpdateUsage",
        { NodeID: this.cfg.nodeId, Volumes: [{ ...volume, Abnormal: true, Message: message }] },
        { signal: r.signal, timeoutMs: 10_000 },
      );
    } catch (err) {
      r.log.warn("reporting the volume's condition failed", { error: asBerthError(err).message });
    }
  }

  /** NodeUnpublish (and NodeUnstage) through the plugin until it answers; never throws. */
  private async tellPluginLater(r: EscalatedRelease, rec: VolumeAttention, d: DetachedVolume): Promise<void> {
    const { stub } = r;
    try {
      await retryWithBackoff(
        async () => {
          const plugin = await this.cfg.registry.waitForPlugin("csi-node", stub.pluginId, {
            signal: r.signal,
          });
          const req = { plugin, allocId: r.allocId, volumeId: stub.volumeId, namespace: stub.namespace };
          const unmount = { ...req, externalId: stub.externalId, usage: stub.usage };
          await this.cfg.volumeManager.tellPluginDetached(unmount, d, r.signal);
        },
        {
          ...this.backoff,
          deadlineMs: Infinity,
          signal: r.signal,
          shouldRetry: (err) => !isAbortError(err) && !r.signal.aborted,
          onRetry: (err, attempt) =>
            r.log.debug("telling the plugin of a lazily detached volume failed, retrying", {
              error: asBerthError(err).message,
              attempt: attempt + 1,
            }),
        },
      );
      this.cfg.attention?.markVolumeAttentionPluginTold(rec.allocId, rec.alias);
      r.log.info("the plugin answered the unmount of a lazily detached volume", { volume: stub.volumeId });
    } catch (err) {
      if (!r.signal.aborted && !isAbortError(err))
        r.log.warn("gave up telling the plugin of a lazily detached volume", { error: err });
    }
  }
}
