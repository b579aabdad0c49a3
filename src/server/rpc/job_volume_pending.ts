/**
 * A claim of a volume its job creates on first placement (structs/job_volume_create.ts) may come
 * before the leader's create finished: the volume is then "to be created", not missing. The node's
 * lookup (CSIVolume.GetForNode) answers the create's plugin, so the agent waits for that node
 * plugin, and the claim is refused retryably (ERR_CSI_VOLUME_UNSCHEDULABLE: the agent retries it
 * with backoff, as a claim of a volume in use) until the create is recorded — never a failed alloc.
 */
import { allocIndex, allocTaskGroup } from "../../structs/alloc.js";
import { BerthError } from "../../structs/errors.js";
import { volumeSourceForAlloc, type VolumeCreateSpec } from "../../structs/job.js";
import { createRequestsOf } from "../../structs/job_volume_create.js";
import type { StateReader } from "../state/store.js";

/** The create of `volumeId` by alloc `allocId`'s group, when that group creates it. */
export function pendingCreateOf(
  state: Pick<StateReader, "getAlloc">,
  namespace: string,
  allocId: string,
  volumeId: string,
): VolumeCreateSpec | undefined {
  const alloc = state.getAlloc(allocId);
  if (!alloc || alloc.Namespace !== namespace) return undefined;
  const group = allocTaskGroup(alloc);
  if (!group) return undefined;
  return createRequestsOf(group).find((r) => volumeSourceForAlloc(r, allocIndex(alloc)) === volumeId)?.Create;
}

export function awaitingCreate(volumeId: string): BerthError {
  return new BerthError(
    "ERR_CSI_VOLUME_UNSCHEDULABLE",
    `volume ${JSON.stringify(volumeId)} is created by this allocation's job on first placement and is not created yet`,
  );
}
