/** Read helpers over any StateReader: the denormalised shapes endpoints and the scheduler need. */
import type { CSIPluginSummary } from "../../structs/plugin.js";
import { denormalizeVolume, type CSIVolume } from "../../structs/volume.js";
import type { StateReader } from "./store.js";

/**
 * Plugin summaries already read, by plugin ID, for a caller that denormalises many volumes of a
 * state that does not change meanwhile (a list, a scheduling plan): each plugin is read once.
 */
export type PluginSummaries = Map<string, CSIPluginSummary | undefined>;

function summaryOf(state: StateReader, pluginId: string, seen?: PluginSummaries) {
  if (!seen) return state.pluginSummary(pluginId);
  if (!seen.has(pluginId)) seen.set(pluginId, state.pluginSummary(pluginId));
  return seen.get(pluginId);
}

/** A volume with its plugin-derived fields (health, Schedulable, ControllerRequired) filled. */
export function volumeView(
  state: StateReader,
  namespace: string,
  id: string,
  seen?: PluginSummaries,
): CSIVolume | undefined {
  const vol = state.getVolume(namespace, id);
  return vol && denormalizeVolume(vol, summaryOf(state, vol.PluginID, seen));
}

export function volumeListView(
  state: StateReader,
  filter: { namespace?: string; pluginId?: string },
): CSIVolume[] {
  const seen: PluginSummaries = new Map();
  return state.listVolumes(filter).map((v) => denormalizeVolume(v, summaryOf(state, v.PluginID, seen)));
}
