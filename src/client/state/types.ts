/** What the client persists about CSI volumes: deliberately minimal (docs/design.md step 5). */
import type { AccessMode, AttachmentMode } from "../../structs/volume.js";

/** How an alloc uses a volume; also the key that separates stagings of one volume. */
export interface VolumeUsage {
  readOnly: boolean;
  accessMode: AccessMode;
  attachmentMode: AttachmentMode;
}

/** One volume mounted for one alloc, keyed in the DB by (alloc, volume alias). */
export interface CsiVolumeStub {
  volumeId: string;
  namespace: string;
  pluginId: string;
  externalId: string;
  usage: VolumeUsage;
  /** Host view of the staging path ("" when the plugin does not stage). */
  stagingPath: string;
  /** Host view of the publish target: what the task mounts. */
  targetPath: string;
  publishContext?: Record<string, string>;
}

/**
 * A release in progress. `unmounted` is checkpointed once NodeUnpublish (and NodeUnstage when due)
 * succeeded, so a restarted agent goes straight to asking the server to unpublish.
 */
export interface PendingRelease {
  stub: CsiVolumeStub;
  unmounted: boolean;
}

/**
 * A volume whose release on this node was escalated (client/allocrunner/csi_escalate.ts): its
 * NodeUnpublish/NodeUnstage hung past `csi_unmount_escalate_after`, and berth detached the mounts
 * lazily itself. Kept (one per alloc's use) until the volume is mounted on this node again.
 */
export interface VolumeAttention {
  allocId: string;
  /** The alloc's name for the volume (its group's volume block). */
  alias: string;
  volumeId: string;
  namespace: string;
  pluginId: string;
  /** Host paths berth detached lazily ("" when that one was not). */
  targetPath: string;
  stagingPath: string;
  /** Unix ms of the escalation. */
  since: number;
  /** The plugin answered NodeUnpublish (and NodeUnstage) since: its own state converged. */
  pluginTold: boolean;
}
