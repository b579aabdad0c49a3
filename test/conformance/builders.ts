/** Records for the StateStore conformance suite, built only from src/structs (no store, no I/O). */
import type { Allocation } from "../../src/structs/alloc.js";
import { newEval, type Evaluation } from "../../src/structs/eval.js";
import type { Job } from "../../src/structs/job.js";
import { validateJob } from "../../src/structs/job_validate.js";
import type { Node } from "../../src/structs/node.js";
import type { CSIInfo } from "../../src/structs/plugin.js";
import { newVolume, type CSIVolume } from "../../src/structs/volume.js";

export function pluginInfo(
  pluginId: string,
  side: "node" | "controller",
  over: Partial<CSIInfo> = {},
): CSIInfo {
  const controller = side === "controller";
  return {
    PluginID: pluginId,
    AllocID: "",
    Healthy: true,
    HealthDescription: "healthy",
    UpdateTime: 1,
    Provider: "example.csi",
    ProviderVersion: "1.0.0",
    RequiresControllerPlugin: controller,
    RequiresTopologies: false,
    ControllerInfo: controller
      ? {
          SupportsCreateDelete: true,
          SupportsAttachDetach: true,
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
        }
      : null,
    NodeInfo: controller
      ? null
      : {
          ID: "ext-node",
          MaxVolumes: 0,
          AccessibleTopology: null,
          RequiresNodeStageVolume: true,
          SupportsStats: false,
          SupportsExpand: false,
          SupportsCondition: false,
        },
    ...over,
  };
}

export function node(id: string, over: Partial<Node> = {}): Node {
  return {
    ID: id,
    Name: id,
    Datacenter: "dc1",
    NodeClass: "",
    Status: "ready",
    StatusDescription: "",
    SchedulingEligibility: "eligible",
    Drivers: {},
    CSIControllerPlugins: {},
    CSINodePlugins: {},
    StatusUpdatedAt: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    ...over,
  };
}

export function volume(id: string, over: Partial<CSIVolume> = {}): CSIVolume {
  return newVolume({
    ID: id,
    PluginID: "p1",
    ExternalID: `ext-${id}`,
    RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    ...over,
  });
}

/** A job whose group `g` (Count `count`) mounts CSI volume `source` (per_alloc when asked). */
export function volumeJob(
  id: string,
  opts: { namespace?: string; source?: string; perAlloc?: boolean; count?: number } = {},
): Job {
  return validateJob({
    ID: id,
    Namespace: opts.namespace ?? "default",
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count ?? 1,
        Volumes: {
          data: {
            Type: "csi",
            Source: opts.source ?? "vol1",
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
            PerAlloc: opts.perAlloc ?? false,
          },
        },
        Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
      },
    ],
  });
}

/** A job running plugin `pluginId`: group `g`, `count` instances of side `side`. */
export function pluginJob(
  id: string,
  pluginId: string,
  opts: { type?: string; side?: "node" | "controller" | "monolith"; count?: number } = {},
): Job {
  return validateJob({
    ID: id,
    Type: opts.type ?? "service",
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count ?? 1,
        Tasks: [
          {
            Name: "plugin",
            Driver: "raw_exec",
            CSIPluginConfig: { ID: pluginId, Type: opts.side ?? "node", MountDir: "/csi" },
          },
        ],
      },
    ],
  });
}

export function alloc(
  id: string,
  job: Job,
  nodeId: string,
  index = 0,
  over: Partial<Allocation> = {},
): Allocation {
  return {
    ID: id,
    Namespace: job.Namespace,
    Name: `${job.ID}.g[${index}]`,
    NodeID: nodeId,
    NodeName: nodeId,
    JobID: job.ID,
    Job: job,
    TaskGroup: "g",
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: 0,
    ModifyTime: 0,
    ...over,
  };
}

export function evaluation(id: string, job: Job): Evaluation {
  return newEval({ ...job, JobModifyIndex: 0 }, id, "job-register", 0, 0);
}
