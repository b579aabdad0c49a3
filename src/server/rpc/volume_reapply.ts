/**
 * A spec applied again to an existing volume (`volume create` of an existing ID, `volume register`
 * of an existing volume; issue 33 item 7). The caller holds the volume's lock. In order:
 * 1. the immutable fields are checked before any plugin call (checkImmutable: a 400 naming the
 *    field; register keeps Nomad's 409 texts for its own, volume_register.ts);
 * 2. changed `MutableParameters` go to ControllerModifyVolume, through a controller that advertises
 *    MODIFY_VOLUME, and are recorded once it succeeded (a plugin without it: a 400 naming
 *    MutableParameters, and nothing is recorded: a record the storage does not match would lie);
 * 3. a larger capacity is an expansion (volume_expand.ts, which honours ONLINE/OFFLINE).
 * Each step is recorded as soon as it succeeds, so a failure of a later one leaves the earlier one
 * on record and repeating the same request converges (ModifyVolume with the parameters it already
 * has is a no-op for a conforming plugin).
 */
import { BerthError, asBerthError, validationError } from "../../structs/errors.js";
import type { CSIVolume } from "../../structs/volume.js";
import { immutableFieldChanges, mutableParametersChange } from "../../structs/volume_reapply.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import { volumeView } from "../state/views.js";
import { expandIfRequested, knownCapacity } from "./volume_expand.js";

/** Throws a 400 naming `${field}.<Field>` for the first immutable field `spec` would change. */
export function checkImmutable(prev: CSIVolume, spec: CSIVolume, field: string): void {
  const change = immutableFieldChanges(prev, spec)[0];
  if (change) throw validationError(`${field}.${change.field}`, change.message);
}

/** Modify, then expand, `existing` as `spec` asks; answers the volume as it is afterwards. */
export async function reapplyExisting(
  deps: ServerDeps,
  existing: CSIVolume,
  spec: CSIVolume,
  field: string,
  signal?: AbortSignal,
): Promise<CSIVolume> {
  const modified = await modifyIfRequested(deps, existing, spec, field, signal);
  return expandIfRequested(deps, modified, spec, field, signal);
}

async function modifyIfRequested(
  deps: ServerDeps,
  existing: CSIVolume,
  spec: CSIVolume,
  field: string,
  signal?: AbortSignal,
): Promise<CSIVolume> {
  const params = mutableParametersChange(existing, spec);
  if (!params) return existing;
  try {
    await deps.controllers.call(
      existing.PluginID,
      "ClientCSI.ControllerModifyVolume",
      {
        PluginID: existing.PluginID,
        ExternalVolumeID: existing.ExternalID,
        MutableParameters: params,
        Secrets: { ...existing.Secrets, ...spec.Secrets },
      },
      { requires: "SupportsModify", signal },
    );
  } catch (err) {
    const e = asBerthError(err);
    if (e.code !== "ERR_CSI_NOT_SUPPORTED") throw err;
    throw new BerthError(
      "ERR_CSI_NOT_SUPPORTED",
      `${field}.MutableParameters: plugin ${JSON.stringify(existing.PluginID)} does not advertise MODIFY_VOLUME, so the mutable parameters of volume ${JSON.stringify(existing.ID)} cannot be changed`,
      { field: `${field}.MutableParameters`, cause: err },
    );
  }
  const modified = await deps.store.txn((tx) => {
    const cur = tx.getVolume(existing.Namespace, existing.ID);
    if (!cur) throw new BerthError("ERR_NOT_FOUND", `volume ${JSON.stringify(existing.ID)} was deregistered`);
    tx.putVolume({ ...cur, MutableParameters: params, ModifyTime: Date.now() * 1_000_000 });
    return volumeView(tx, existing.Namespace, existing.ID)!;
  });
  deps.log.info("volume modified", { volume: existing.ID, plugin: existing.PluginID });
  return modified;
}

/**
 * `volume register` of an existing volume with storage: modify and expand as `spec` asks, under
 * the volume's lock (the register's own write comes after, over the updated record).
 */
export async function reapplyRegistered(
  deps: ServerDeps,
  spec: CSIVolume,
  field: string,
  signal?: AbortSignal,
): Promise<void> {
  const cheap = deps.store.getVolume(spec.Namespace, spec.ID);
  if (!cheap || cheap.ExternalID === "") return;
  if (!mutableParametersChange(cheap, spec) && spec.RequestedCapacityMin <= knownCapacity(cheap)) return;
  await deps.volumeLocks.run(
    volumeKey(spec.Namespace, spec.ID),
    async () => {
      const existing = volumeView(deps.store, spec.Namespace, spec.ID);
      if (existing) await reapplyExisting(deps, existing, spec, field, signal);
    },
    signal,
  );
}
