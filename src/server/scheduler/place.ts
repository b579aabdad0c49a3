/**
 * One alloc placed: the node rank.ts picks among those the sample offers (every ready node for a
 * service or batch job, the one node of the slot for a system job), and the new Allocation record
 * on it. Pure over the PlanContext.
 */
import type { Allocation } from "../../structs/alloc.js";
import type { AllocMetric } from "../../structs/eval.js";
import { newUuid } from "../../structs/ids.js";
import type { Job, TaskGroup } from "../../structs/job.js";
import type { PlanContext } from "./feasibility.js";
import type { NodeSample } from "./node_sample.js";
import { allocName } from "./plan_types.js";
import { selectNode } from "./rank.js";

/** Places one alloc on the node rank.ts picks (Nomad's feasibility, binpack, affinity, spread). */
export function placeAlloc(
  ctx: PlanContext,
  nodes: NodeSample,
  job: Job,
  group: TaskGroup,
  index: number,
  nowNs: number,
  metrics: AllocMetric,
): Allocation | null {
  const id = newUuid();
  const picked = selectNode(ctx, nodes, job, group, index, id, metrics);
  if (!picked) return null;
  const best = picked.node;
  return {
    ID: id,
    Namespace: job.Namespace,
    Name: allocName(job, group.Name, index),
    NodeID: best.ID,
    NodeName: best.Name,
    JobID: job.ID,
    Job: job,
    TaskGroup: group.Name,
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "",
    TaskStates: {},
    AllocatedResources: picked.resources,
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: nowNs,
    ModifyTime: nowNs,
  };
}
