/** Plugin fingerprints (CSIInfo) as a node reports them: a node plugin and a controller plugin. */
import type { CSIInfo } from "../../src/structs/plugin.js";

export function nodePluginInfo(
  pluginId: string,
  over: Partial<CSIInfo> = {},
  nodeInfo: Partial<NonNullable<CSIInfo["NodeInfo"]>> = {},
): CSIInfo {
  return {
    PluginID: pluginId,
    AllocID: "",
    Healthy: true,
    HealthDescription: "healthy",
    UpdateTime: 1,
    Provider: "example.csi",
    ProviderVersion: "1.0.0",
    RequiresControllerPlugin: false,
    RequiresTopologies: false,
    ControllerInfo: null,
    NodeInfo: {
      ID: "ext-node",
      MaxVolumes: 0,
      AccessibleTopology: null,
      RequiresNodeStageVolume: true,
      SupportsStats: false,
      SupportsExpand: false,
      SupportsCondition: false,
      ...nodeInfo,
    },
    ...over,
  };
}

export function controllerInfo(pluginId: string, attach = true, over: Partial<CSIInfo> = {}): CSIInfo {
  return {
    ...nodePluginInfo(pluginId),
    NodeInfo: null,
    RequiresControllerPlugin: true,
    ControllerInfo: {
      SupportsCreateDelete: true,
      SupportsAttachDetach: attach,
      SupportsListVolumes: false,
      SupportsGetCapacity: false,
      SupportsCreateDeleteSnapshot: false,
      SupportsListSnapshots: false,
      SupportsClone: false,
      SupportsReadOnlyAttach: true,
      SupportsExpand: false,
      SupportsListVolumesAttachedNodes: false,
      SupportsCondition: false,
      SupportsGet: false,
    },
    ...over,
  };
}
