/** Whether an alloc still holds a claim: what keeps it (and its job) from being collected. */
import { allocIndex, allocTaskGroup, type Allocation } from "../../structs/alloc.js";
import { findClaim } from "../../structs/claim.js";
import { volumeSourceForAlloc } from "../../structs/job.js";
import type { StateWriter } from "../state/store.js";

/** True while any volume the alloc's group requests still has a claim of it, at any stage. */
export function holdsClaim(tx: StateWriter, alloc: Allocation): boolean {
  const group = allocTaskGroup(alloc);
  for (const req of Object.values(group?.Volumes ?? {})) {
    if (req.Type !== "csi") continue;
    const vol = tx.getVolume(alloc.Namespace, volumeSourceForAlloc(req, allocIndex(alloc)));
    if (vol && findClaim(vol, alloc.ID)) return true;
  }
  return false;
}
