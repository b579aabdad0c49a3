/** Read helpers over any StateReader: the denormalised shapes endpoints and the scheduler need. */
import { denormalizeVolume, type CSIVolume } from "../../structs/volume.js";
import type { StateReader } from "./store.js";

/** A volume with its plugin-derived fields (health, Schedulable, ControllerRequired) filled. */
export function volumeView(state: StateReader, namespace: string, id: string): CSIVolume | undefined {
  const vol = state.getVolume(namespace, id);
  return vol && denormalizeVolume(vol, state.pluginSummary(vol.PluginID));
}

export function volumeListView(
  state: StateReader,
  filter: { namespace?: string; pluginId?: string },
): CSIVolume[] {
  const plugins = new Map<string, ReturnType<StateReader["pluginSummary"]>>();
  return state.listVolumes(filter).map((v) => {
    if (!plugins.has(v.PluginID)) plugins.set(v.PluginID, state.pluginSummary(v.PluginID));
    return denormalizeVolume(v, plugins.get(v.PluginID));
  });
}
