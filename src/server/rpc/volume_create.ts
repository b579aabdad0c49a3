/**
 * `PUT /v1/volume/csi/:id/create` (CSIVolume.Create): creates storage through a controller plugin
 * and records it as berth volumes.
 *
 * Contract (Nomad records the volumes whose CreateVolume succeeded and reports the others' errors,
 * so a failed request can leave some volumes behind; berth makes the new volumes all or nothing):
 * 1. Every spec is checked before any plugin call: its plugin exists and has a controller, no
 *    namespace + ID appears twice in the request, an existing volume of that ID names the same
 *    plugin, and an interrupted create of that ID (an orphan) has the same name and plugin. A refused spec is a 4xx naming its field, and nothing is called or written.
 * 2. The request holds the lock of every volume it names (in one sorted order, so two requests never
 *    wait on each other), so no claim, delete or other create of those volumes interleaves.
 * 3. Volumes that already exist with storage are a re-apply (volume_reapply.ts): a changed immutable
 *    field is refused in step 1, changed mutable parameters go to ControllerModifyVolume, and more
 *    capacity is an expansion (volume_expand.ts); otherwise they are answered as they are. An expansion is recorded as soon as it
 *    succeeds and is never undone (volumes never shrink); repeating the request converges.
 * 4. The new volumes are created one by one (CreateVolume is idempotent by name in CSI, so a retried
 *    create after a lost answer finds the same storage). If volume k fails, the storage this request
 *    created for volumes before k is deleted again through the plugin (compensation, newest first)
 *    and the request answers volume k's error: no new volume is recorded.
 * 5. Only when every plugin call succeeded are all new volumes recorded, in one store transaction.
 *
 * Crash safety: before the first CreateVolume, one write records a create intent per new volume
 * (structs/volume_intent.ts); the write that records the volumes removes them. A failed request
 * removes the intents of volumes whose storage is known to be gone, and keeps those whose storage
 * may be left (an undo that failed, a create whose outcome is unknown): with a crash's leftovers,
 * they are the orphans server/orphans/ reports until an operator adopts or deletes them.
 */
import { BerthError, asBerthError, type ErrorCode } from "../../structs/errors.js";
import type { CSIVolume } from "../../structs/volume.js";
import { checkDistinctVolumes } from "../../structs/volume_validate.js";
import { intentOf } from "../../structs/volume_intent.js";
import { requireVolumeNamespace } from "../../structs/namespace.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import { volumeWake } from "../scheduler/blocked_wait.js";
import type { StateReader } from "../state/store.js";
import { volumeView } from "../state/views.js";
import { checkImmutable, reapplyExisting } from "./volume_reapply.js";
import { requirePlugin } from "./volume_register.js";
import { capacityTopologyRequest } from "./volume_create_capacity.js";

/** Storage this request created: what compensation deletes and the record stores. */
export interface Created {
  spec: CSIVolume;
  record: CSIVolume;
}

export async function createVolumes(
  deps: ServerDeps,
  vols: CSIVolume[],
  signal?: AbortSignal,
): Promise<{ Volumes: CSIVolume[]; Index: number }> {
  checkDistinctVolumes(vols);
  vols.forEach((v, i) => checkCreate(deps.store, v, i));
  const keys = [...new Set(vols.map((v) => volumeKey(v.Namespace, v.ID)))].sort();
  const out = await withLocks(deps, keys, signal, () => createLocked(deps, vols, signal));
  void deps.scheduler.retryBlocked(vols.map((v) => volumeWake(v.Namespace, v.ID, v.PluginID)));
  return { Volumes: out, Index: deps.store.index() };
}

type Fresh = { v: CSIVolume; i: number }[];

/**
 * The intents, in one write: from here on a crash leaves a record of every name this request may
 * create storage under (structs/volume_intent.ts). The namespace is read again in this write: from
 * here on the intent holds it (namespace.ts).
 */
async function recordIntents(deps: ServerDeps, fresh: Fresh): Promise<void> {
  if (fresh.length === 0) return;
  const now = Date.now();
  await deps.store.txn((tx) =>
    fresh.forEach(({ v, i }) => {
      requireVolumeNamespace(tx.getNamespace(v.Namespace), v, `Volumes[${i}]`);
      tx.putVolumeIntent(intentOf(v, now));
    }),
  );
}

/** Records every created volume and drops its intent, in one write (contract step 5). */
async function recordCreated(deps: ServerDeps, created: readonly Created[]): Promise<void> {
  await deps.store.txn((tx) => {
    for (const { spec, record } of created) {
      // The create's intent held the namespace (namespace.ts refuses to delete it): checked anyway.
      requireVolumeNamespace(tx.getNamespace(spec.Namespace), spec, "Volumes");
      const prev = tx.getVolume(spec.Namespace, spec.ID);
      if (prev && prev.ExternalID !== "") {
        throw new BerthError("ERR_CONFLICT", `volume ${JSON.stringify(spec.ID)} was registered meanwhile`);
      }
      const nowNs = Date.now() * 1_000_000;
      tx.putVolume(
        prev
          ? {
              ...record,
              ReadClaims: prev.ReadClaims,
              WriteClaims: prev.WriteClaims,
              PastClaims: prev.PastClaims,
              CreateTime: prev.CreateTime ?? nowNs,
              ModifyTime: nowNs,
            }
          : { ...record, CreateTime: nowNs, ModifyTime: nowNs },
      );
      tx.deleteVolumeIntent(spec.Namespace, spec.ID);
    }
  });
}

/**
 * A failed request's undo (contract step 4 and crash safety): deletes the storage it created, and
 * keeps intents only where storage may be left — an undo that failed, or a create whose outcome is
 * unknown (`failed`: a timeout or a lost link may hide storage the plugin made).
 */
async function undoCreate(
  deps: ServerDeps,
  fresh: Fresh,
  created: readonly Created[],
  failed: { v: CSIVolume; err: unknown } | undefined,
): Promise<void> {
  const left = await compensate(deps, [...created]);
  const keep = new Set(left.map((c) => volumeKey(c.spec.Namespace, c.spec.ID)));
  if (failed && mayHaveCreated(asBerthError(failed.err).code)) {
    keep.add(volumeKey(failed.v.Namespace, failed.v.ID));
  }
  await deps.store.txn((tx) => {
    for (const { v } of fresh) {
      if (!keep.has(volumeKey(v.Namespace, v.ID))) tx.deleteVolumeIntent(v.Namespace, v.ID);
    }
  });
  if (keep.size > 0) {
    deps.log.warn(
      "volume create failed and may have left storage: reported as orphans until adopted or deleted",
      {
        volumes: [...keep],
      },
    );
  }
}

async function createLocked(deps: ServerDeps, vols: CSIVolume[], signal?: AbortSignal): Promise<CSIVolume[]> {
  // Checked again under the locks: a create or delete of one of them may have run meanwhile.
  vols.forEach((v, i) => checkCreate(deps.store, v, i));
  const answers = new Map<number, CSIVolume>();
  const fresh: Fresh = [];
  for (const [i, v] of vols.entries()) {
    const existing = volumeView(deps.store, v.Namespace, v.ID);
    if (existing && existing.ExternalID !== "") {
      answers.set(i, await reapplyExisting(deps, existing, v, `Volumes[${i}]`, signal));
    } else fresh.push({ v, i });
  }
  await recordIntents(deps, fresh);
  const created: Created[] = [];
  let failed: { v: CSIVolume; err: unknown } | undefined;
  try {
    for (const { v, i } of fresh) {
      try {
        created.push(await createStorage(deps, v, signal));
      } catch (err) {
        failed = { v, err };
        throw failureOf(err, v, i);
      }
    }
    await recordCreated(deps, created);
  } catch (err) {
    await undoCreate(deps, fresh, created, failed);
    throw err;
  }
  for (const { record } of created) {
    deps.log.info("volume created", {
      volume: record.ID,
      plugin: record.PluginID,
      external_id: record.ExternalID,
    });
  }
  fresh.forEach(({ v, i }) => answers.set(i, volumeView(deps.store, v.Namespace, v.ID)!));
  return vols.map((_, i) => answers.get(i)!);
}

/**
 * CreateVolume for `v` (idempotent by `v.Name` in CSI: the same name answers the same storage) and
 * the record it makes; nothing is written. Adopting an orphan repeats it with the intent's spec.
 */
export async function createStorage(deps: ServerDeps, v: CSIVolume, signal?: AbortSignal): Promise<Created> {
  const resp = await deps.controllers.call(
    v.PluginID,
    "ClientCSI.ControllerCreateVolume",
    {
      PluginID: v.PluginID,
      Name: v.Name,
      CapacityMin: v.RequestedCapacityMin,
      CapacityMax: v.RequestedCapacityMax,
      Capabilities: v.RequestedCapabilities,
      MountOptions: v.MountOptions,
      Parameters: v.Parameters,
      Secrets: v.Secrets ?? {},
      SnapshotID: v.SnapshotID,
      CloneID: v.CloneID,
      TopologyRequest: capacityTopologyRequest(deps.store, v, Date.now()),
      MutableParameters: v.MutableParameters,
    },
    { requires: "SupportsCreateDelete", signal },
  );
  const record: CSIVolume = {
    ...v,
    ExternalID: resp.ExternalVolumeID,
    Capacity: resp.CapacityBytes,
    Context: { ...v.Context, ...resp.VolumeContext },
    Topologies: resp.Topologies?.length ? resp.Topologies : v.Topologies,
  };
  return { spec: v, record };
}

/** `err` of spec `i`, naming it (the code is the plugin's, kept for retries). */
function failureOf(err: unknown, v: CSIVolume, i: number): BerthError {
  const e = asBerthError(err);
  return new BerthError(
    e.code,
    `Volumes[${i}] (${JSON.stringify(v.ID)}): ${e.message}; no volume of this request was recorded`,
    e.field === undefined ? { cause: err } : { field: e.field, cause: err },
  );
}

/**
 * Deletes the storage of `created`, newest first, without the request's signal (a client that
 * went away must not stop the undo). A failure is logged and the rest is still tried; answers the
 * ones whose storage is left.
 */
async function compensate(deps: ServerDeps, created: Created[]): Promise<Created[]> {
  const left: Created[] = [];
  for (const c of [...created].reverse()) {
    const { record } = c;
    try {
      await deps.controllers.call(
        record.PluginID,
        "ClientCSI.ControllerDeleteVolume",
        { PluginID: record.PluginID, ExternalVolumeID: record.ExternalID, Secrets: record.Secrets ?? {} },
        { requires: "SupportsCreateDelete" },
      );
      deps.log.info("volume create undone", { volume: record.ID, external_id: record.ExternalID });
    } catch (err) {
      if (asBerthError(err).code === "ERR_CSI_NOT_FOUND") continue;
      left.push(c);
      deps.log.warn("could not undo a volume create: its storage is left on the plugin", {
        volume: record.ID,
        plugin: record.PluginID,
        external_id: record.ExternalID,
        error: err,
      });
    }
  }
  return left;
}

/**
 * Codes that say the plugin made nothing (it refused, or the call never reached a plugin); any
 * other failure of CreateVolume (timeouts, lost links, internal errors) may hide storage.
 */
const NOTHING_CREATED: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_VALIDATION",
  "ERR_NOT_FOUND",
  "ERR_CSI_INVALID_ARGUMENT",
  "ERR_CSI_NOT_FOUND",
  "ERR_CSI_ALREADY_EXISTS",
  "ERR_CSI_OUT_OF_RANGE",
  "ERR_CSI_RESOURCE_EXHAUSTED",
  "ERR_CSI_UNIMPLEMENTED",
  "ERR_CSI_NOT_SUPPORTED",
  "ERR_CSI_NO_CAPACITY",
  "ERR_CSI_FAILED_PRECONDITION",
  "ERR_CSI_PLUGIN_UNAVAILABLE",
  "ERR_NODE_NOT_CONNECTED",
]);

export function mayHaveCreated(code: ErrorCode): boolean {
  return !NOTHING_CREATED.has(code);
}

function checkCreate(state: StateReader, v: CSIVolume, i: number): void {
  requireVolumeNamespace(state.getNamespace(v.Namespace), v, `Volumes[${i}]`);
  const plugin = requirePlugin(state, v, i);
  // No controller side at all: none is expected by a job and none reports. One that is expected
  // but not running now is left to the controller call, which answers "no healthy controller".
  if (plugin.ControllersExpected === 0 && plugin.Instances.Controllers === 0) {
    throw new BerthError(
      "ERR_CSI_NOT_SUPPORTED",
      `plugin ${JSON.stringify(v.PluginID)} has no controller to create volumes`,
    );
  }
  // An interrupted create of this ID under another name or plugin is storage only its intent
  // remembers: overwriting the intent would forget it. The same name and plugin is a retry of that
  // create (CSI: the same storage), which completes it.
  const intent = state.getVolumeIntent(v.Namespace, v.ID);
  if (intent && (intent.Name !== v.Name || intent.PluginID !== v.PluginID)) {
    throw new BerthError(
      "ERR_CONFLICT",
      `volume ${JSON.stringify(v.ID)} has an unfinished create (plugin ${JSON.stringify(intent.PluginID)}, name ${JSON.stringify(intent.Name)}): wait for it, or adopt or delete it (berth volume orphans)`,
    );
  }
  const existing = state.getVolume(v.Namespace, v.ID);
  if (existing && existing.PluginID !== v.PluginID) {
    throw new BerthError(
      "ERR_CONFLICT",
      `volume ${JSON.stringify(v.ID)} exists with plugin ${JSON.stringify(existing.PluginID)}`,
    );
  }
  if (existing && existing.ExternalID !== "") checkImmutable(existing, v, `Volumes[${i}]`);
}

/** Runs `fn` holding the lock of every key, taken in the given (sorted) order. */
function withLocks<T>(
  deps: ServerDeps,
  keys: string[],
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const [first, ...rest] = keys;
  if (first === undefined) return fn();
  return deps.volumeLocks.run(first, () => withLocks(deps, rest, signal, fn), signal);
}
