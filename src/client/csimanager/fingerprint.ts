/**
 * Fingerprinting one plugin instance into the CSIInfo the server keeps per node. Pure apart from
 * the CSI calls: the result depends only on the plugin's answers, so it is tested with a fake.
 */
import type {
  CsiClient,
  CsiControllerCapabilities,
  CsiNodeCapabilities,
  CsiPluginCapabilities,
  CsiPluginInfo,
  CsiNodeInfo,
} from "../../csi/types.js";
import type { CSIControllerInfo, CSIInfo, CSINodeInfo } from "../../structs/plugin.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import { isBerthError, type ErrorCode } from "../../structs/errors.js";

export interface Fingerprint {
  info: CSIInfo;
  /** Set when the last fingerprint of a node instance succeeded. */
  nodeCapabilities: CsiNodeCapabilities | null;
  controllerCapabilities: CsiControllerCapabilities | null;
  /** Why the last fingerprint failed (its error's code), when it did. */
  failureCode?: ErrorCode;
}

export async function fingerprintPlugin(
  client: CsiClient,
  plugin: RegisteredPlugin,
  opts: { signal?: AbortSignal; timeoutMs: number },
  previous?: Fingerprint,
): Promise<Fingerprint> {
  const call = { timeoutMs: opts.timeoutMs, signal: opts.signal };
  const base: CSIInfo = {
    PluginID: plugin.pluginId,
    AllocID: plugin.allocId,
    Healthy: false,
    HealthDescription: "",
    UpdateTime: Date.now(),
    Provider: previous?.info.Provider ?? "",
    ProviderVersion: previous?.info.ProviderVersion ?? "",
    RequiresControllerPlugin: previous?.info.RequiresControllerPlugin ?? false,
    RequiresTopologies: previous?.info.RequiresTopologies ?? false,
    ControllerInfo: previous?.info.ControllerInfo ?? null,
    NodeInfo: previous?.info.NodeInfo ?? null,
  };
  try {
    const pluginInfo: CsiPluginInfo = await client.getPluginInfo(call);
    const pluginCaps: CsiPluginCapabilities = await client.getPluginCapabilities(call);
    const probe = await client.probe(call);
    const info: CSIInfo = {
      ...base,
      Provider: pluginInfo.name,
      ProviderVersion: pluginInfo.vendorVersion,
      RequiresControllerPlugin: pluginCaps.controllerService,
      RequiresTopologies: pluginCaps.volumeAccessibilityConstraints,
    };
    let nodeCapabilities: CsiNodeCapabilities | null = null;
    let controllerCapabilities: CsiControllerCapabilities | null = null;
    if (plugin.role === "csi-node") {
      const nodeInfo = await client.nodeGetInfo(call);
      nodeCapabilities = await client.nodeGetCapabilities(call);
      info.NodeInfo = toNodeInfo(nodeInfo, nodeCapabilities);
      info.ControllerInfo = null;
    } else {
      controllerCapabilities = await client.controllerGetCapabilities(call);
      info.ControllerInfo = toControllerInfo(controllerCapabilities, pluginCaps);
      info.NodeInfo = null;
    }
    info.Healthy = probe.ready;
    info.HealthDescription = probe.ready ? "healthy" : "plugin reports it is not ready";
    return { info, nodeCapabilities, controllerCapabilities };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      info: { ...base, HealthDescription: `fingerprint failed: ${message}` },
      nodeCapabilities: null,
      controllerCapabilities: null,
      failureCode: isBerthError(err) ? err.code : undefined,
    };
  }
}

export function toNodeInfo(info: CsiNodeInfo, caps: CsiNodeCapabilities): CSINodeInfo {
  return {
    ID: info.nodeId,
    MaxVolumes: info.maxVolumesPerNode,
    AccessibleTopology: info.accessibleTopology
      ? { Segments: { ...info.accessibleTopology.segments } }
      : null,
    RequiresNodeStageVolume: caps.stageUnstageVolume,
    SupportsStats: caps.getVolumeStats,
    SupportsExpand: caps.expandVolume,
    SupportsCondition: caps.volumeCondition,
  };
}

export function toControllerInfo(
  caps: CsiControllerCapabilities,
  plugin?: Pick<CsiPluginCapabilities, "onlineExpansion">,
): CSIControllerInfo {
  const info: CSIControllerInfo = {
    SupportsCreateDelete: caps.createDeleteVolume,
    SupportsAttachDetach: caps.publishUnpublishVolume,
    SupportsListVolumes: caps.listVolumes,
    SupportsGetCapacity: caps.getCapacity,
    SupportsCreateDeleteSnapshot: caps.createDeleteSnapshot,
    SupportsListSnapshots: caps.listSnapshots,
    SupportsClone: caps.cloneVolume,
    SupportsReadOnlyAttach: caps.publishReadonly,
    SupportsExpand: caps.expandVolume,
    SupportsListVolumesAttachedNodes: caps.listVolumesPublishedNodes,
    SupportsCondition: caps.volumeCondition,
    SupportsGet: caps.getVolume,
  };
  // Present only when true (csi_terms.ts): a plugin without them answers Nomad's shape.
  if (caps.modifyVolume) info.SupportsModify = true;
  if (caps.expandVolume && plugin?.onlineExpansion) info.SupportsOnlineExpand = true;
  return info;
}

/** Equality for change detection: UpdateTime alone changing is not a change worth reporting. */
export function sameInfo(a: CSIInfo | undefined, b: CSIInfo | undefined): boolean {
  if (!a || !b) return a === b;
  return JSON.stringify({ ...a, UpdateTime: 0 }) === JSON.stringify({ ...b, UpdateTime: 0 });
}
