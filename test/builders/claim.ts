/** A volume claim (write, single-node-writer) of an alloc on its node. */
import type { Allocation } from "../../src/structs/alloc.js";
import type { VolumeClaim } from "../../src/structs/volume.js";

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
