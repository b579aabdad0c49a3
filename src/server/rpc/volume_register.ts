/**
 * `PUT /v1/volume/csi/:id` (CSIVolume.Register): records existing storage as berth volumes.
 *
 * Contract: all or nothing. Every spec is checked — its plugin exists, no namespace + ID appears
 * twice in the request, no existing volume of that ID names another plugin or external ID, and the
 * storage is valid for a controller that requires it (ControllerValidateVolume) — before anything
 * is written; then every volume is written in one store transaction, which checks the stored state
 * again (a register or create that slipped in between refuses the whole request). A refused
 * request changes nothing. Re-registering keeps claims.
 *
 * A re-register follows Nomad's CSIVolume.Merge: the user-set identity of a volume is immutable —
 * Name, ExternalID, CloneID and SnapshotID (each only when the new spec sets it), PluginID, and
 * Parameters (when the new spec has any) — and a change answers 409 with Nomad's texts
 * ("unable to update volume: volume name cannot be updated"). A spec without a name carries the
 * default Name = ID (volume_validate.ts), which is read as "not set". Context is replaced only
 * when the new spec has one. Changed MutableParameters and a larger capacity_min of an existing
 * volume are applied through the controller first (ControllerModifyVolume, expansion as `create`
 * does; volume_reapply.ts), each recorded as it succeeds. The answer carries the stored volumes (Nomad's
 * CSIVolumeRegisterResponse.Volumes), and CreateTime/ModifyTime (Unix ns) are stamped.
 */
import { BerthError, validationError } from "../../structs/errors.js";
import { requireVolumeNamespace } from "../../structs/namespace.js";
import type { CSIPluginSummary } from "../../structs/plugin.js";
import type { CSIVolume } from "../../structs/volume.js";
import { checkDistinctVolumes } from "../../structs/volume_validate.js";
import type { ServerDeps } from "../deps.js";
import { volumeWake } from "../scheduler/blocked_wait.js";
import type { StateReader } from "../state/store.js";
import { reapplyRegistered } from "./volume_reapply.js";

export async function registerVolumes(
  deps: ServerDeps,
  specs: CSIVolume[],
  signal?: AbortSignal,
): Promise<{ Index: number; Volumes: CSIVolume[] }> {
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
    const plugin = deps.store.pluginSummary(v.PluginID);
    if (plugin?.ControllerRequired) await validateWithController(deps, v, signal);
  }
  for (const [i, v] of vols.entries()) await reapplyRegistered(deps, v, `Volumes[${i}]`, signal);
  const stored: CSIVolume[] = [];
  await deps.store.txn((tx) => {
    stored.length = 0;
    vols.forEach((v, i) => checkRegister(tx, v, i));
    const nowNs = Date.now() * 1_000_000;
    for (const v of vols) {
      const prev = tx.getVolume(v.Namespace, v.ID);
      const next: CSIVolume = prev
        ? {
            ...prev,
            RequestedCapabilities: v.RequestedCapabilities,
            MountOptions: v.MountOptions,
            Secrets: v.Secrets,
            Context: Object.keys(v.Context).length > 0 ? v.Context : prev.Context,
            Topologies: v.Topologies,
            Capacity: v.Capacity || prev.Capacity,
            CreateTime: prev.CreateTime ?? nowNs,
            ModifyTime: nowNs,
          }
        : { ...v, CreateTime: nowNs, ModifyTime: nowNs };
      tx.putVolume(next);
      stored.push(next);
    }
  });
  void deps.scheduler.retryBlocked(stored.map((v) => volumeWake(v.Namespace, v.ID, v.PluginID)));
  return { Index: deps.store.index(), Volumes: stored };
}

/** Nomad's CSIVolume.Merge refusals for `update` over the stored `prev`, in Merge's order. */
export function immutableChanges(prev: CSIVolume, update: CSIVolume): string[] {
  const errs: string[] = [];
  // The validator fills Name = ID when the spec has none: that is "not set", as Nomad's "".
  if (update.Name !== "" && update.Name !== update.ID && update.Name !== prev.Name)
    errs.push("volume name cannot be updated");
  if (update.ExternalID !== "" && update.ExternalID !== prev.ExternalID)
    errs.push("volume external ID cannot be updated");
  if (update.PluginID !== prev.PluginID) errs.push("volume plugin ID cannot be updated");
  if (update.CloneID !== "" && update.CloneID !== prev.CloneID)
    errs.push("volume clone ID cannot be updated");
  if (update.SnapshotID !== "" && update.SnapshotID !== prev.SnapshotID)
    errs.push("volume snapshot ID cannot be updated");
  if (Object.keys(update.Parameters).length > 0 && !sameStringMap(update.Parameters, prev.Parameters))
    errs.push("volume parameters cannot be updated");
  return errs;
}

function sameStringMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

function checkRegister(state: StateReader, v: CSIVolume, i: number): void {
  requireVolumeNamespace(state.getNamespace(v.Namespace), v, `Volumes[${i}]`);
  requirePlugin(state, v, i);
  const prev = state.getVolume(v.Namespace, v.ID);
  const errs = prev ? immutableChanges(prev, v) : [];
  if (errs.length > 0) {
    throw new BerthError(
      "ERR_CONFLICT",
      `Volumes[${i}] (${JSON.stringify(v.ID)}): unable to update volume: ${errs.join("; ")}`,
      {
        field: `Volumes[${i}]`,
      },
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
export function requirePlugin(state: StateReader, v: CSIVolume, i: number): CSIPluginSummary {
  const plugin = state.pluginSummary(v.PluginID);
  if (!plugin) {
    throw validationError(
      `Volumes[${i}].PluginID`,
      `no CSI plugin named ${JSON.stringify(v.PluginID)} is running`,
    );
  }
  return plugin;
}
