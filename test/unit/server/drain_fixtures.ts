/** Builders for the drain tests: plugin jobs, and allocs made by hand from a job. */
import type { Allocation, ClientStatus, DesiredStatus } from "../../../src/structs/alloc.js";
import type { Job } from "../../../src/structs/job.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";

/** A job of `type` with one group `g` of `count` running a `pluginType` CSI plugin `p1`, optionally pinned to a node. */
export function pluginJob(
  id: string,
  opts: { type?: string; pluginType?: string; node?: string; count?: number } = {},
): Job {
  return validateJob({
    ID: id,
    Type: opts.type ?? "system",
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count ?? 1,
        ...(opts.node
          ? { Constraints: [{ LTarget: "${node.unique.id}", RTarget: opts.node, Operand: "=" }] }
          : {}),
        Tasks: [
          {
            Name: "plugin",
            Driver: "exec",
            CSIPluginConfig: { ID: "p1", Type: opts.pluginType ?? "node", MountDir: "/csi" },
          },
        ],
      },
    ],
  });
}

/** A job without volumes or plugins. */
export function plainJob(id: string, type = "service"): Job {
  return validateJob({
    ID: id,
    Type: type,
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
  });
}

let seq = 0;

export function allocOf(
  job: Job,
  nodeId: string,
  over: Partial<Allocation> & { ClientStatus?: ClientStatus; DesiredStatus?: DesiredStatus } = {},
): Allocation {
  seq++;
  return {
    ID: `${job.ID}-${nodeId}-${seq}`,
    Namespace: job.Namespace,
    Name: `${job.ID}.g[0]`,
    NodeID: nodeId,
    NodeName: nodeId,
    JobID: job.ID,
    Job: job,
    TaskGroup: "g",
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "running",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: seq,
    ModifyIndex: seq,
    AllocModifyIndex: seq,
    CreateTime: 0,
    ModifyTime: 0,
    ...over,
  };
}

export function claimOf(
  alloc: Pick<Allocation, "ID" | "NodeID">,
  state: VolumeClaim["State"] = "taken",
): VolumeClaim {
  return {
    AllocationID: alloc.ID,
    NodeID: alloc.NodeID,
    ExternalNodeID: "",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    State: state,
  };
}
