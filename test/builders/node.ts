/** A ready, eligible node record with an exec driver that supports mounts. */
import type { Node } from "../../src/structs/node.js";

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
