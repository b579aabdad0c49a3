/** Test builders for nodes, plugin fingerprints, volumes and jobs. */
import type { Node } from "../../../src/structs/node.js";
import type { CSIInfo } from "../../../src/structs/plugin.js";
import { newVolume, type CSIVolume } from "../../../src/structs/volume.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job } from "../../../src/structs/job.js";

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

export function makeNode(id: string, over: Partial<Node> = {}): Node {
  return {
    ID: id,
    Name: id,
    Datacenter: "dc1",
    NodeClass: "",
    Status: "ready",
    StatusDescription: "",
    SchedulingEligibility: "eligible",
    Drivers: { exec: { Detected: true, Healthy: true, HealthDescription: "", SupportsMounts: true } },
    CSIControllerPlugins: {},
    CSINodePlugins: {},
    StatusUpdatedAt: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    ...over,
  };
}

export function makeVolume(id: string, over: Partial<CSIVolume> = {}): CSIVolume {
  return newVolume({
    ID: id,
    PluginID: "p1",
    ExternalID: `ext-${id}`,
    RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    ...over,
  });
}

export function csiJob(
  id: string,
  opts: {
    count?: number;
    source?: string;
    accessMode?: string;
    readOnly?: boolean;
    perAlloc?: boolean;
    type?: string;
  } = {},
): Job {
  return validateJob({
    ID: id,
    Type: opts.type ?? "service",
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count ?? 1,
        Volumes: {
          data: {
            Type: "csi",
            Source: opts.source ?? "vol1",
            AccessMode: opts.accessMode ?? "single-node-writer",
            AttachmentMode: "file-system",
            ReadOnly: opts.readOnly ?? false,
            PerAlloc: opts.perAlloc ?? false,
          },
        },
        Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
      },
    ],
  });
}
