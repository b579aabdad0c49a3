/** An allocation made by hand from a job, placed on a node (IDs and indexes from a module counter). */
import type { Allocation, ClientStatus, DesiredStatus } from "../../src/structs/alloc.js";
import type { Job } from "../../src/structs/job.js";

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
