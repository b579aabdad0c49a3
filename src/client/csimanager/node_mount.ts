/**
 * The node side of giving a volume to an alloc, for the VolumeManager (which holds the volume's lock,
 * keeps the staging reference counts and decides whether to stage): NodeStage and NodePublish, each
 * retried per policy and counted only once the host path holds the volume (the `checkMounted` the
 * manager passes, mount_check.ts); NodeExpandVolume; and the stub persisted for a published volume.
 * The counterpart of node_release.ts.
 */
import fs from "node:fs/promises";
import type { CsiVolumeCapability } from "../../csi/types.js";
import type { Logger } from "../../internal/log.js";
import type { CsiVolumeStub } from "../state/types.js";
import { retryCsiCall, type CsiRetryPolicy } from "./csi_retry.js";
import type { NodePluginHandle } from "./manager.js";
import type { CheckedCall } from "./mount_check.js";
import { usageKey, type VolumePaths } from "./paths.js";
import { unstageAfterFailedStage } from "./node_release.js";
import type { ExpandVolumeRequest, MountVolumeRequest } from "./volume_requests.js";

export interface NodeMountStep {
  node: NodePluginHandle;
  req: MountVolumeRequest;
  paths: VolumePaths;
  capability: CsiVolumeCapability;
  call: { timeoutMs: number; signal?: AbortSignal };
  policy: CsiRetryPolicy;
  log: Logger;
  /** Throws ERR_CSI_NOT_MOUNTED unless `hostPath` holds the volume after `call` answered success. */
  checkMounted: (call: CheckedCall, hostPath: string) => Promise<void>;
}

/** NodeStageVolume into the volume's staging path, until it is mounted there. */
export async function stageOnNode(s: NodeMountStep): Promise<void> {
  const { node, req, paths, capability, call, log } = s;
  const vol = req.volume;
  await retryCsiCall(
    "NodeStageVolume",
    async () => {
      await node.client.nodeStageVolume(
        {
          volumeId: vol.ExternalID,
          publishContext: { ...req.publishContext },
          stagingTargetPath: paths.stagingPath,
          volumeCapability: capability,
          secrets: { ...vol.Secrets },
          volumeContext: { ...vol.Context },
        },
        call,
      );
      await s.checkMounted("NodeStageVolume", paths.hostStagingPath);
    },
    s.policy,
    log,
    call.signal,
  );
}

/**
 * NodeStage into the staging path (made first); with `undoIfFailed` (nobody else uses the staging)
 * a failed stage is undone with one short attempt (`cleanupTimeoutMs`), so it leaves nothing mounted.
 */
export async function stageWithUndo(
  s: NodeMountStep,
  undoIfFailed: boolean,
  cleanupTimeoutMs: number,
): Promise<void> {
  const { node, req, paths, log } = s;
  await fs.mkdir(paths.hostStagingPath, { recursive: true });
  try {
    await stageOnNode(s);
  } catch (err) {
    if (undoIfFailed) {
      await unstageAfterFailedStage({
        node,
        plugin: req.plugin,
        externalId: req.volume.ExternalID,
        paths,
        call: { timeoutMs: cleanupTimeoutMs },
        policy: s.policy,
        log,
      });
    }
    throw err;
  }
  log.info("volume staged", { usage: usageKey(req.usage) });
}

/** NodePublishVolume into the alloc's target path (from the staging when the plugin stages). */
export async function publishOnNode(s: NodeMountStep, stages: boolean): Promise<void> {
  const { node, req, paths, capability, call, log } = s;
  const vol = req.volume;
  await retryCsiCall(
    "NodePublishVolume",
    async () => {
      await node.client.nodePublishVolume(
        {
          volumeId: vol.ExternalID,
          publishContext: { ...req.publishContext },
          stagingTargetPath: stages ? paths.stagingPath : "",
          targetPath: paths.targetPath,
          volumeCapability: capability,
          readonly: req.usage.readOnly,
          secrets: { ...vol.Secrets },
          volumeContext: { ...vol.Context },
        },
        call,
      );
      await s.checkMounted("NodePublishVolume", paths.hostTargetPath);
    },
    s.policy,
    log,
    call.signal,
  );
}

/** What is persisted of a published volume (minimal: enough to restore and release it). */
export function publishedStub(req: MountVolumeRequest, paths: VolumePaths, stages: boolean): CsiVolumeStub {
  const vol = req.volume;
  return {
    volumeId: vol.ID,
    namespace: vol.Namespace,
    pluginId: vol.PluginID,
    externalId: vol.ExternalID,
    usage: {
      readOnly: req.usage.readOnly,
      accessMode: req.usage.accessMode,
      attachmentMode: req.usage.attachmentMode,
    },
    stagingPath: stages ? paths.hostStagingPath : "",
    targetPath: paths.hostTargetPath,
    publishContext: { ...req.publishContext },
  };
}

/** NodeExpandVolume of an alloc's published volume; answers the new capacity in bytes. */
export async function expandOnNode(
  node: NodePluginHandle,
  req: ExpandVolumeRequest,
  paths: VolumePaths,
  call: { timeoutMs: number; signal?: AbortSignal },
  policy: CsiRetryPolicy,
  log: Logger,
): Promise<{ capacityBytes: number }> {
  const { stub } = req;
  return retryCsiCall(
    "NodeExpandVolume",
    () =>
      node.client.nodeExpandVolume(
        {
          volumeId: stub.externalId,
          volumePath: paths.targetPath,
          stagingTargetPath: stub.stagingPath ? paths.stagingPath : "",
          capacityRange: { requiredBytes: req.capacityMin, limitBytes: req.capacityMax },
          volumeCapability: null,
          secrets: { ...req.secrets },
        },
        call,
      ),
    policy,
    log,
    call.signal,
  );
}
