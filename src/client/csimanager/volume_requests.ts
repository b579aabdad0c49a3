/** What callers hand the VolumeManager (volume_manager.ts) and what it answers. */
import type { BerthError } from "../../structs/errors.js";
import type { ClaimedVolume } from "../../structs/rpc.js";
import type { MountOptions } from "../../structs/volume.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { CsiVolumeStub, VolumeUsage } from "../state/types.js";
import type { Logger } from "../../internal/log.js";
import type { CsiRetryObserver, CsiRetryPolicy } from "./csi_retry.js";
import type { NodePluginSource } from "./manager.js";
import type { KeyedMutex } from "../../internal/keyed_mutex.js";

export interface MountUsage extends VolumeUsage {
  /** Already resolved by the caller: the request's options replace the volume's. */
  mountOptions: MountOptions | null;
}

export interface MountVolumeRequest {
  plugin: RegisteredPlugin;
  volume: ClaimedVolume;
  allocId: string;
  usage: MountUsage;
  publishContext: Record<string, string>;
  /** Told each time the plugin reported success but the host path holds no volume (retried). */
  onNotMounted?: (err: BerthError) => void;
}

export interface MountVolumeResult {
  /** Host path of the published target: what the task mounts. */
  source: string;
  stub: CsiVolumeStub;
}

export interface UnmountVolumeRequest {
  plugin: RegisteredPlugin;
  allocId: string;
  volumeId: string;
  namespace: string;
  externalId: string;
  usage: VolumeUsage;
  /**
   * Told of each NodeUnpublish/NodeUnstage failure that is retried inside the call, so a release
   * that keeps failing transiently is visible while it retries (not only once the call gives up).
   */
  onRetry?: CsiRetryObserver;
}

/**
 * Consulted under the volume's lock, so that two parties releasing one alloc's use of a volume (its
 * own csi_hook and an operator's `volume detach`) never both unmount it: the second one sees the
 * first one's durable record and makes no CSI call.
 */
export interface UnmountGuard {
  /** False when this alloc's use of the volume was already unmounted by someone else. */
  stillMounted(): boolean;
  /** Runs under the lock right after a successful unmount, to record it durably. */
  unmounted(): void;
}

export interface ExpandVolumeRequest {
  plugin: RegisteredPlugin;
  allocId: string;
  stub: CsiVolumeStub;
  capacityMin: number;
  capacityMax: number;
  secrets: Record<string, string>;
}

/** How the VolumeManager is built: where node plugins come from, retries, deadlines, mount checks. */
export interface VolumeManagerConfig {
  plugins: NodePluginSource;
  log: Logger;
  retry?: CsiRetryPolicy;
  /** Deadline of each single CSI call; 5 min by default (staging a network volume can be slow). */
  callTimeoutMs?: number;
  /** Whether a host path is a mount point; reads /proc/self/mountinfo by default. */
  isMountPoint?: (hostPath: string) => Promise<boolean>;
  /** Whether a host path is a device node (block volumes); lstat by default. */
  isDeviceNode?: (hostPath: string) => Promise<boolean>;
  /**
   * The per-volume locks (keyed by paths.ts volumeKey); shared with the volume stats poller so
   * that its NodeGetVolumeStats is never in flight beside a stage, publish or unmount. Own by default.
   */
  locks?: KeyedMutex;
}

/** The release of what a mount request may have mounted (the cleanup after a failed publish). */
export function unmountOf(req: MountVolumeRequest): UnmountVolumeRequest {
  return {
    plugin: req.plugin,
    allocId: req.allocId,
    volumeId: req.volume.ID,
    namespace: req.volume.Namespace,
    externalId: req.volume.ExternalID,
    usage: req.usage,
  };
}
