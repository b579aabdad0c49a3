/**
 * The node side of giving a volume back, for the VolumeManager (which holds the volume's lock and
 * decides whether the staging goes too): NodeUnpublish / NodeUnstage, "already released"
 * (NOT_FOUND) counting as success, then the directories the plugin left behind (empty ones only,
 * dir_cleanup.ts).
 */
import path from "node:path";
import { ignoreCsiNotFound } from "../../csi/errors.js";
import type { Logger } from "../../internal/log.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import { retryCsiCall, type CsiRetryObserver, type CsiRetryPolicy } from "./csi_retry.js";
import { removeReleasedPath } from "./dir_cleanup.js";
import type { NodePluginHandle } from "./manager.js";
import type { VolumePaths } from "./paths.js";

export interface NodeReleaseStep {
  node: NodePluginHandle;
  plugin: Pick<RegisteredPlugin, "hostDir">;
  /** The plugin's ID of the volume. */
  externalId: string;
  paths: VolumePaths;
  call: { timeoutMs: number; signal?: AbortSignal };
  policy: CsiRetryPolicy;
  log: Logger;
  /** Told of each retried NodeUnpublish/NodeUnstage failure (a release made visible). */
  onRetry?: CsiRetryObserver;
}

/** NodeUnpublishVolume (retried per `policy`), then the target dir and its empty parents. */
export async function unpublishOnNode(s: NodeReleaseStep): Promise<void> {
  await ignoreCsiNotFound(
    retryCsiCall(
      "NodeUnpublishVolume",
      () =>
        s.node.client.nodeUnpublishVolume({ volumeId: s.externalId, targetPath: s.paths.targetPath }, s.call),
      s.policy,
      s.log,
      s.call.signal,
      s.onRetry,
    ),
  );
  await removeReleasedPath(s.paths.hostTargetPath, path.join(s.plugin.hostDir, "per-alloc"), s.log);
}

/** NodeUnstageVolume (retried per `policy`), then the staging dir and its empty parents. */
export async function unstageOnNode(s: NodeReleaseStep): Promise<void> {
  await ignoreCsiNotFound(
    retryCsiCall(
      "NodeUnstageVolume",
      () =>
        s.node.client.nodeUnstageVolume(
          { volumeId: s.externalId, stagingTargetPath: s.paths.stagingPath },
          s.call,
        ),
      s.policy,
      s.log,
      s.call.signal,
      s.onRetry,
    ),
  );
  await removeReleasedPath(s.paths.hostStagingPath, path.join(s.plugin.hostDir, "staging"), s.log);
}

/**
 * Best effort after a stage that failed (the plugin may have half-staged, or reported success
 * without mounting): one NodeUnstage, then the empty dirs. Never throws: the stage's own error is
 * what the caller reports.
 */
export async function unstageAfterFailedStage(s: NodeReleaseStep): Promise<void> {
  try {
    await unstageOnNode({ ...s, policy: { ...s.policy, deadlineMs: 0 } });
  } catch (err) {
    s.log.warn("cleanup after failed stage failed", { error: err });
  }
}
