/**
 * What the csi_hook's parts share: the narrow interfaces of what they use (declared here, by their
 * consumer; the agent's objects and the tests' fakes satisfy them), the hook's configuration, and
 * the alloc's CSI volume requests. Types and one pure helper only.
 */
import { allocTaskGroup, type Allocation } from "../../structs/alloc.js";
import type { VolumeRequest } from "../../structs/job.js";
import type { ClaimedVolume, ServerMethods } from "../../structs/rpc.js";
import type { PluginRole, RegisteredPlugin } from "../dynamicplugins/types.js";
import type { RegistryListener } from "../dynamicplugins/registry.js";
import type {
  MountVolumeRequest,
  MountVolumeResult,
  UnmountGuard,
  UnmountVolumeRequest,
} from "../csimanager/volume_requests.js";
import type { DetachedVolume } from "../csimanager/lazy_detach.js";
import type { CsiVolumeStub, PendingRelease, VolumeAttention } from "../state/types.js";
import type { AllocHookResources } from "./hook_resources.js";
import type { Logger } from "../../internal/log.js";

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
  /** Escalation of a hung release (csi_escalate.ts). */
  detachHung(allocId: string, stub: CsiVolumeStub, guard?: UnmountGuard): Promise<DetachedVolume>;
  tellPluginDetached(
    req: UnmountVolumeRequest,
    detached: DetachedVolume,
    signal?: AbortSignal,
  ): Promise<void>;
}

/** Where escalated releases are recorded (the client state DB). */
export interface CsiAttentionStore {
  putVolumeAttention(rec: VolumeAttention): void;
  markVolumeAttentionPluginTold(allocId: string, alias: string): void;
  clearVolumeAttention(namespace: string, volumeId: string): void;
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
  /**
   * client `csi_unmount_escalate_after`: how long a release's node unmount may hang before berth
   * detaches the mounts lazily itself (csi_escalate.ts); 10 min by default, 0: never.
   */
  unmountEscalateAfterMs?: number;
  /** Records of escalated releases; none kept when absent. */
  attention?: CsiAttentionStore;
}

/** See PluginDirs.volumeReleased (taskrunner/plugin_dirs.ts). */
export interface CsiHookPluginDirs {
  volumeReleased(stub: CsiVolumeStub): Promise<void>;
}

/** What this agent got from its claim of a volume: enough to publish it again. */
export interface Claimed {
  volume: ClaimedVolume;
  publishContext: Record<string, string>;
}

/** The alloc's group's CSI volume requests, by alias, in a stable order. */
export function csiRequests(alloc: Allocation): [string, VolumeRequest][] {
  const group = allocTaskGroup(alloc);
  if (!group) return [];
  return Object.entries(group.Volumes ?? {})
    .filter(([, v]) => v.Type === "csi")
    .sort(([a], [b]) => a.localeCompare(b));
}

/** How long a release or a prerun waits for a node plugin to register. */
export function pluginWaitMs(cfg: CsiHookConfig): number {
  return cfg.pluginWaitTimeoutMs ?? 5 * 60_000;
}

/** Deadline of each server RPC. */
export function rpcTimeoutMs(cfg: CsiHookConfig): number {
  return cfg.rpcTimeoutMs ?? 60_000;
}
