/**
 * CSI plugins as the server sees them: one record per plugin ID, built from the fingerprints the
 * node agents report. Health counts are derived from the per-node entries, never stored apart from
 * them, so they cannot drift.
 */
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

export interface CSIPlugin {
  ID: string;
  Provider: string;
  Version: string;
  /** RequiresControllerPlugin && SupportsAttachDetach: volumes go through ControllerPublish. */
  ControllerRequired: boolean;
  /** Keyed by node ID. */
  Controllers: Record<string, CSIInfo>;
  Nodes: Record<string, CSIInfo>;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  CreateIndex: number;
  ModifyIndex: number;
}

export function isPluginType(v: unknown): v is CSIPluginType {
  return typeof v === "string" && (PLUGIN_TYPES as readonly string[]).includes(v);
}

/**
 * Rebuilds a plugin record from every node's fingerprint entries for it. `entries` holds, per node,
 * the controller and node instances that node reports (either may be absent).
 */
export function buildPlugin(
  id: string,
  entries: { nodeId: string; controller?: CSIInfo; node?: CSIInfo }[],
  indexes: { CreateIndex: number; ModifyIndex: number },
): CSIPlugin {
  const Controllers: Record<string, CSIInfo> = {};
  const Nodes: Record<string, CSIInfo> = {};
  let provider = "";
  let version = "";
  let controllerRequired = false;
  for (const e of entries) {
    for (const info of [e.controller, e.node]) {
      if (!info) continue;
      if (info.Provider) provider = info.Provider;
      if (info.ProviderVersion) version = info.ProviderVersion;
    }
    if (e.controller) {
      Controllers[e.nodeId] = e.controller;
      if (e.controller.RequiresControllerPlugin && e.controller.ControllerInfo?.SupportsAttachDetach) {
        controllerRequired = true;
      }
    }
    if (e.node) {
      Nodes[e.nodeId] = e.node;
      if (e.node.RequiresControllerPlugin && e.node.ControllerInfo?.SupportsAttachDetach) {
        controllerRequired = true;
      }
    }
  }
  const healthy = (m: Record<string, CSIInfo>) => Object.values(m).filter((i) => i.Healthy).length;
  return {
    ID: id,
    Provider: provider,
    Version: version,
    ControllerRequired: controllerRequired,
    Controllers,
    Nodes,
    ControllersHealthy: healthy(Controllers),
    ControllersExpected: Object.keys(Controllers).length,
    NodesHealthy: healthy(Nodes),
    NodesExpected: Object.keys(Nodes).length,
    ...indexes,
  };
}
