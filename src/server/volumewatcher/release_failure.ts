/**
 * What the watcher reads and writes when a release run fails (watcher.ts run): the step to record
 * on the claim, and the controllers a release waiting for one has seen.
 */
import type { Logger } from "../../internal/log.js";
import { findClaim, needsControllerUnpublish, unpublishPluginOf } from "../../structs/claim.js";
import type { VolumeClaim } from "../../structs/volume.js";
import type { StateStore } from "../state/store.js";
import { nodeIsGone } from "./decide.js";
import { recordReleaseStatus } from "./release_status.js";

export interface FailedRun {
  namespace: string;
  volumeId: string;
  claim: VolumeClaim;
  error: string;
  attempts: number;
  /** Unix ms of the next attempt. */
  nextAttemptMs: number;
}

/**
 * Records on the claim which server step failed: ControllerUnpublishVolume when the volume needs
 * it and the claim is before it, otherwise the rest of the walk. Best effort: a failed write is
 * logged, and the next failed run writes again.
 */
export async function recordFailure(store: StateStore, log: Logger, f: FailedRun): Promise<void> {
  const vol = store.getVolume(f.namespace, f.volumeId);
  const now = vol && findClaim(vol, f.claim.AllocationID);
  if (!vol || !now) return;
  const beforeController =
    now.State === "node-detached" || (now.State === "taken" && nodeIsGone(store.getNode(now.NodeID)));
  // As the walk decides (nextReleaseStep): the claim's own ControllerPublish record, whatever the
  // plugin looks like now (its controller may be down), or the plugin requiring the controller.
  // The stored record's ControllerRequired is not filled in: read the plugin's.
  const pluginRequires = store.pluginSummary(vol.PluginID)?.ControllerRequired ?? false;
  const controller = needsControllerUnpublish({ ...vol, ControllerRequired: pluginRequires }, now);
  try {
    await recordReleaseStatus(store, {
      namespace: f.namespace,
      volumeId: f.volumeId,
      allocId: f.claim.AllocationID,
      step: controller && beforeController ? "controller-unpublish" : "server-release",
      lastError: f.error,
      attempts: f.attempts,
      nextAttemptMs: f.nextAttemptMs,
    });
  } catch (err) {
    log.warn("could not record a claim's release status", { volume: f.volumeId, error: err });
  }
}

/** Nodes with a healthy controller of the plugin that supports attach/detach. */
export function attachControllers(store: StateStore, pluginId: string): string[] {
  const controllers = store.healthyPluginInstances(pluginId, "controller");
  return [...controllers]
    .filter(([, c]) => c.ControllerInfo?.SupportsAttachDetach === true)
    .map(([nodeId]) => nodeId);
}

export interface ControllerWait {
  pluginId: string;
  seen: Set<string>;
}

/** What the volume's release waits for when `claim`'s ControllerUnpublish found no controller. */
export function controllerWait(
  store: StateStore,
  namespace: string,
  volumeId: string,
  claim: VolumeClaim | undefined,
): ControllerWait | undefined {
  const vol = store.getVolume(namespace, volumeId);
  const now = vol && claim && findClaim(vol, claim.AllocationID);
  if (!vol || !now) return undefined;
  const pluginId = unpublishPluginOf(vol, now);
  return { pluginId, seen: new Set(attachControllers(store, pluginId)) };
}
