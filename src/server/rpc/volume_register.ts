/**
 * `PUT /v1/volume/csi/:id` (CSIVolume.Register): records existing storage as berth volumes.
 *
 * Contract: all or nothing. Every spec is checked — its plugin exists, no namespace + ID appears
 * twice in the request, no existing volume of that ID names another plugin or external ID, and the
 * storage is valid for a controller that requires it (ControllerValidateVolume) — before anything
 * is written; then every volume is written in one store transaction, which checks the stored state
 * again (a register or create that slipped in between refuses the whole request). A refused
 * request changes nothing. Re-registering keeps claims.
 */
import { BerthError, validationError } from "../../structs/errors.js";
import type { CSIPlugin } from "../../structs/plugin.js";
import type { CSIVolume } from "../../structs/volume.js";
import { checkDistinctVolumes } from "../../structs/volume_validate.js";
import type { ServerDeps } from "../deps.js";
import type { StateReader } from "../state/store.js";

export async function registerVolumes(
  deps: ServerDeps,
  specs: CSIVolume[],
  signal?: AbortSignal,
): Promise<{ Index: number }> {
  // No external ID (Nomad does not require one): an update keeps the stored one, a new volume is
  // known to its plugin by its own ID, as Nomad's CSIVolume.RemoteID() answers.
  const vols = specs.map((v) =>
    v.ExternalID !== ""
      ? v
      : { ...v, ExternalID: deps.store.getVolume(v.Namespace, v.ID)?.ExternalID || v.ID },
  );
  checkDistinctVolumes(vols);
  vols.forEach((v, i) => checkRegister(deps.store, v, i));
  for (const v of vols) {
    const plugin = deps.store.getPlugin(v.PluginID);
    if (plugin?.ControllerRequired) await validateWithController(deps, v, signal);
  }
  await deps.store.txn((tx) => {
    vols.forEach((v, i) => checkRegister(tx, v, i));
    for (const v of vols) {
      const prev = tx.getVolume(v.Namespace, v.ID);
      tx.putVolume(
        prev
          ? {
              ...prev,
              Name: v.Name,
              RequestedCapabilities: v.RequestedCapabilities,
              MountOptions: v.MountOptions,
              Secrets: v.Secrets,
              Parameters: v.Parameters,
              Context: v.Context,
              Topologies: v.Topologies,
              Capacity: v.Capacity || prev.Capacity,
            }
          : v,
      );
    }
  });
  void deps.scheduler.retryBlocked();
  return { Index: deps.store.index() };
}

function checkRegister(state: StateReader, v: CSIVolume, i: number): void {
  requirePlugin(state, v, i);
  const prev = state.getVolume(v.Namespace, v.ID);
  if (prev && (prev.PluginID !== v.PluginID || prev.ExternalID !== v.ExternalID)) {
    throw new BerthError(
      "ERR_CONFLICT",
      `volume ${JSON.stringify(v.ID)} is already registered with plugin ${JSON.stringify(prev.PluginID)} and external ID ${JSON.stringify(prev.ExternalID)}`,
    );
  }
}

async function validateWithController(deps: ServerDeps, v: CSIVolume, signal?: AbortSignal): Promise<void> {
  await deps.controllers.call(
    v.PluginID,
    "ClientCSI.ControllerValidateVolume",
    {
      PluginID: v.PluginID,
      ExternalVolumeID: v.ExternalID,
      Capabilities: v.RequestedCapabilities,
      MountOptions: v.MountOptions,
      Parameters: v.Parameters,
      Context: v.Context,
      Secrets: v.Secrets ?? {},
    },
    signal ? { signal } : {},
  );
}

/** The plugin `Volumes[i]` names, or a 400 naming `Volumes[i].PluginID`. */
export function requirePlugin(state: StateReader, v: CSIVolume, i: number): CSIPlugin {
  const plugin = state.getPlugin(v.PluginID);
  if (!plugin) {
    throw validationError(
      `Volumes[${i}].PluginID`,
      `no CSI plugin named ${JSON.stringify(v.PluginID)} is running`,
    );
  }
  return plugin;
}
