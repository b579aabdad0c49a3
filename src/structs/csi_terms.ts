/**
 * The CSI vocabulary that jobs, nodes, plugins and volumes all speak: access and attachment modes,
 * mount options, plugin types and one plugin instance's fingerprint. It imports nothing, so the
 * records built on it (job.ts, node.ts, plugin.ts, volume.ts) need not import one another for
 * these words; volume.ts and plugin.ts re-export them.
 */
/**
 * The seven CSI access modes (CSI 1.5+), by Nomad's names. single-node-single-writer and
 * single-node-multi-writer are CSI 1.5's refinements of single-node-writer: one writing workload,
 * or many, on one node. Claim rules per mode: claim.ts. A plugin that does not advertise the
 * SINGLE_NODE_MULTI_WRITER capability is sent SINGLE_NODE_WRITER for both (capability_of.ts).
 */
export const ACCESS_MODES = [
  "single-node-reader-only",
  "single-node-writer",
  "single-node-single-writer",
  "single-node-multi-writer",
  "multi-node-reader-only",
  "multi-node-single-writer",
  "multi-node-multi-writer",
] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];

export const ATTACHMENT_MODES = ["file-system", "block-device"] as const;
export type AttachmentMode = (typeof ATTACHMENT_MODES)[number];

export interface MountOptions {
  FSType: string;
  /** May carry credentials (some plugins take them as mount flags): redacted in every API answer. */
  MountFlags: string[];
  /**
   * berth's (Nomad has neither; structs/mount_group.ts): the numeric group a non-root task writes
   * the volume as, and when berth re-applies it ("always" | "on_root_mismatch"). Absent when unset.
   */
  MountGroup?: string;
  MountGroupPolicy?: "always" | "on_root_mismatch";
}

export const PLUGIN_TYPES = ["node", "controller", "monolith"] as const;
export type CSIPluginType = (typeof PLUGIN_TYPES)[number];

export interface CSINodeInfo {
  /** The storage provider's ID for this node (NodeGetInfo.node_id). */
  ID: string;
  MaxVolumes: number;
  AccessibleTopology: { Segments: Record<string, string> } | null;
  RequiresNodeStageVolume: boolean;
  SupportsStats: boolean;
  SupportsExpand: boolean;
  SupportsCondition: boolean;
}

export interface CSIControllerInfo {
  SupportsCreateDelete: boolean;
  SupportsAttachDetach: boolean;
  SupportsListVolumes: boolean;
  SupportsGetCapacity: boolean;
  SupportsCreateDeleteSnapshot: boolean;
  SupportsListSnapshots: boolean;
  SupportsClone: boolean;
  SupportsReadOnlyAttach: boolean;
  SupportsExpand: boolean;
  SupportsListVolumesAttachedNodes: boolean;
  SupportsCondition: boolean;
  SupportsGet: boolean;
  /**
   * berth's additions (Nomad has neither), present only when true so a plugin without them answers
   * Nomad's shape: MODIFY_VOLUME (ControllerModifyVolume), and the plugin's ONLINE volume expansion
   * capability (a volume may grow while published; without it berth expands only unused volumes).
   */
  SupportsModify?: boolean;
  SupportsOnlineExpand?: boolean;
}

/** One plugin instance on one node, as fingerprinted by that node's csimanager. */
export interface CSIInfo {
  PluginID: string;
  AllocID: string;
  Healthy: boolean;
  HealthDescription: string;
  /** Unix milliseconds. */
  UpdateTime: number;
  Provider: string;
  ProviderVersion: string;
  /** The plugin advertises the CONTROLLER_SERVICE capability. */
  RequiresControllerPlugin: boolean;
  /** The plugin advertises VOLUME_ACCESSIBILITY_CONSTRAINTS. */
  RequiresTopologies: boolean;
  ControllerInfo: CSIControllerInfo | null;
  NodeInfo: CSINodeInfo | null;
}
