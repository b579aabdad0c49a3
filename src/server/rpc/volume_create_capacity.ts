/**
 * Capacity-aware `volume create` (issue 33 item 2): the accessibility requirements a CreateVolume
 * sends, steered by the capacities the leader's poll measured (server/capacity/poller.ts) so the
 * volume goes only to topology segments whose last known capacity holds capacity_min; unknown or
 * stale capacity is allowed (structs/capacity_fit.ts placeCreate). When no segment fits, the create
 * is refused before any plugin call with ERR_CSI_NO_CAPACITY, naming each segment's
 * last known free bytes.
 */
import { BerthError } from "../../structs/errors.js";
import { placeCreate } from "../../structs/capacity_fit.js";
import type { CSIVolume, TopologyRequest } from "../../structs/volume.js";
import type { StateReader } from "../state/store.js";

/** The TopologyRequest CreateVolume of `v` sends; throws ERR_CSI_NO_CAPACITY when none fits. */
export function capacityTopologyRequest(
  state: StateReader,
  v: CSIVolume,
  nowMs: number,
): TopologyRequest | null {
  const entries = state.getPluginCapacity(v.PluginID)?.Entries ?? [];
  const placed = placeCreate(entries, v.RequestedTopologies, v.RequestedCapacityMin, nowMs);
  if ("refused" in placed) {
    throw new BerthError(
      "ERR_CSI_NO_CAPACITY",
      `volume ${JSON.stringify(v.ID)} of plugin ${JSON.stringify(v.PluginID)}: ${placed.refused}`,
    );
  }
  return placed.request;
}
