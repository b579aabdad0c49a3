/**
 * Volume endpoints: register/deregister existing storage, create/delete through a controller
 * plugin, and reads. Specs arrive validated (validateVolumeSpec). Operations that touch a plugin or
 * claims hold the volume's lock, so they never interleave with a claim or release of that volume.
 */
import { BerthError, asBerthError, notFound, validationError } from "../../structs/errors.js";
import { isUnclaimed, type CSIVolume } from "../../structs/volume.js";
import type { CSIPlugin } from "../../structs/plugin.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import type { StateReader } from "../state/store.js";
import { volumeListView, volumeView } from "../state/views.js";
import type { CSIVolumeExternalStub } from "../../structs/snapshot.js";
import { ClaimEndpoint } from "./claim.js";
import { allClaimsOf } from "./volume_claims.js";
import { detachVolume, refuseRunning, releaseClaims } from "./volume_detach.js";
import { expandIfRequested } from "./volume_expand.js";
import { SnapshotEndpoint } from "./volume_snapshot.js";

export class VolumeEndpoint {
  /** Snapshots live on the plugin; this endpoint only runs their controller calls. */
  readonly snapshots: SnapshotEndpoint;
  /** The release walk, shared with the node agents' CSIVolume.Unpublish (it is stateless). */
  private readonly claims: ClaimEndpoint;

  constructor(private readonly deps: ServerDeps) {
    this.snapshots = new SnapshotEndpoint(deps);
    this.claims = new ClaimEndpoint(deps);
  }

  get(namespace: string, id: string): CSIVolume {
    const vol = volumeView(this.deps.store, namespace, id);
    if (!vol) throw notFound("volume", id);
    return vol;
  }

  list(filter: { namespace?: string; pluginId?: string }): CSIVolume[] {
    return volumeListView(this.deps.store, filter);
  }

  /**
   * Registers (or updates) existing volumes. Every spec is checked before anything is written, and
   * all are written in one transaction, so a refused request changes nothing. Re-registering keeps
   * claims; changing a volume's plugin or external ID is refused.
   */
  async register(vols: CSIVolume[], signal?: AbortSignal): Promise<{ Index: number }> {
    vols.forEach((v, i) => this.checkRegister(this.deps.store, v, i));
    for (const v of vols) {
      const plugin = this.deps.store.getPlugin(v.PluginID);
      if (plugin?.ControllerRequired) await this.validateWithController(v, signal);
    }
    await this.deps.store.txn((tx) => {
      vols.forEach((v, i) => this.checkRegister(tx, v, i));
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
    void this.deps.scheduler.retryBlocked();
    return { Index: this.deps.store.index() };
  }

  /**
   * Refused while any claim (live or releasing) remains, unless forced. Forced: refused while an
   * alloc that still runs holds a claim; otherwise every claim is released first (node step on live
   * nodes, ControllerUnpublish when due) so no attachment outlives the record. Unknown volumes are a
   * no-op.
   */
  async deregister(
    namespace: string,
    id: string,
    force: boolean,
    signal?: AbortSignal,
  ): Promise<{ Index: number }> {
    const claimed = volumeView(this.deps.store, namespace, id);
    if (force && claimed && !isUnclaimed(claimed)) {
      const held = allClaimsOf(claimed);
      refuseRunning(this.deps, claimed, held);
      await releaseClaims(this.deps, this.claims, claimed, held, signal);
    }
    return this.deps.volumeLocks.run(
      volumeKey(namespace, id),
      async () => {
        await this.deps.store.txn((tx) => {
          const vol = tx.getVolume(namespace, id);
          if (!vol) return;
          if (!force && !isUnclaimed(vol)) throw inUse(vol);
          tx.deleteVolume(namespace, id);
        });
        return { Index: this.deps.store.index() };
      },
      signal,
    );
  }

  /**
   * Creates volumes through a controller plugin (CreateVolume is idempotent by name in CSI, so a
   * retried create after a lost answer finds the same storage). A volume that already exists with
   * storage behind it is returned as it is.
   */
  async create(vols: CSIVolume[], signal?: AbortSignal): Promise<{ Volumes: CSIVolume[]; Index: number }> {
    vols.forEach((v, i) => this.checkCreate(v, i));
    const out: CSIVolume[] = [];
    for (const [i, v] of vols.entries()) out.push(await this.createOne(v, `Volumes[${i}]`, signal));
    void this.deps.scheduler.retryBlocked();
    return { Volumes: out, Index: this.deps.store.index() };
  }

  /** Deletes the storage through the plugin, then the record. Refused while claimed; unknown volumes are a no-op. */
  async delete(
    namespace: string,
    id: string,
    secrets: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ Index: number }> {
    return this.deps.volumeLocks.run(
      volumeKey(namespace, id),
      async () => {
        const vol = this.deps.store.getVolume(namespace, id);
        if (!vol) return { Index: this.deps.store.index() };
        if (!isUnclaimed(vol)) throw inUse(vol);
        try {
          await this.deps.controllers.call(
            vol.PluginID,
            "ClientCSI.ControllerDeleteVolume",
            {
              PluginID: vol.PluginID,
              ExternalVolumeID: vol.ExternalID,
              Secrets: { ...vol.Secrets, ...secrets },
            },
            { requires: "SupportsCreateDelete", ...(signal ? { signal } : {}) },
          );
        } catch (err) {
          if (asBerthError(err).code !== "ERR_CSI_NOT_FOUND") throw err;
        }
        await this.deps.store.txn((tx) => {
          const cur = tx.getVolume(namespace, id);
          if (cur && !isUnclaimed(cur)) throw inUse(cur);
          tx.deleteVolume(namespace, id);
        });
        return { Index: this.deps.store.index() };
      },
      signal,
    );
  }

  /** NodeUnpublish/NodeUnstage on `nodeId` for terminal allocs, then the release walk (volume_detach.ts). */
  detach(namespace: string, id: string, nodeId: string, signal?: AbortSignal): Promise<void> {
    return detachVolume(this.deps, this.claims, namespace, id, nodeId, signal);
  }

  /** The plugin's own list of its volumes (ListVolumes), berth-registered or not. */
  async listExternal(
    pluginId: string,
    page: { perPage: number; nextToken: string },
    signal?: AbortSignal,
  ): Promise<{ Volumes: CSIVolumeExternalStub[]; NextToken: string }> {
    if (!this.deps.store.getPlugin(pluginId)) throw notFound("plugin", pluginId);
    const res = await this.deps.controllers.call(
      pluginId,
      "ClientCSI.ControllerListVolumes",
      { PluginID: pluginId, MaxEntries: page.perPage, StartingToken: page.nextToken },
      { requires: "SupportsListVolumes", pagingToken: page.nextToken, ...(signal ? { signal } : {}) },
    );
    return { Volumes: res.Entries.map((e) => ({ ...e })), NextToken: res.NextToken };
  }

  private async createOne(v: CSIVolume, field: string, signal?: AbortSignal): Promise<CSIVolume> {
    return this.deps.volumeLocks.run(
      volumeKey(v.Namespace, v.ID),
      async () => {
        const existing = volumeView(this.deps.store, v.Namespace, v.ID);
        if (existing) {
          if (existing.PluginID !== v.PluginID) {
            throw new BerthError(
              "ERR_CONFLICT",
              `volume ${JSON.stringify(v.ID)} exists with plugin ${JSON.stringify(existing.PluginID)}`,
            );
          }
          if (existing.ExternalID !== "") return expandIfRequested(this.deps, existing, v, field, signal);
        }
        const resp = await this.deps.controllers.call(
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
            TopologyRequest: v.RequestedTopologies,
          },
          { requires: "SupportsCreateDelete", ...(signal ? { signal } : {}) },
        );
        await this.deps.store.txn((tx) => {
          const prev = tx.getVolume(v.Namespace, v.ID);
          tx.putVolume({
            ...v,
            ...(prev
              ? { ReadClaims: prev.ReadClaims, WriteClaims: prev.WriteClaims, PastClaims: prev.PastClaims }
              : {}),
            ExternalID: resp.ExternalVolumeID,
            Capacity: resp.CapacityBytes,
            Context: { ...v.Context, ...resp.VolumeContext },
            Topologies: resp.Topologies?.length ? resp.Topologies : v.Topologies,
          });
        });
        this.deps.log.info("volume created", {
          volume: v.ID,
          plugin: v.PluginID,
          external_id: resp.ExternalVolumeID,
        });
        return this.get(v.Namespace, v.ID);
      },
      signal,
    );
  }

  private checkRegister(state: StateReader, v: CSIVolume, i: number): void {
    requirePlugin(state, v, i);
    const prev = state.getVolume(v.Namespace, v.ID);
    if (prev && (prev.PluginID !== v.PluginID || prev.ExternalID !== v.ExternalID)) {
      throw new BerthError(
        "ERR_CONFLICT",
        `volume ${JSON.stringify(v.ID)} is already registered with plugin ${JSON.stringify(prev.PluginID)} and external ID ${JSON.stringify(prev.ExternalID)}`,
      );
    }
  }

  private checkCreate(v: CSIVolume, i: number): void {
    const plugin = requirePlugin(this.deps.store, v, i);
    // No controller side at all: none is expected by a job and none reports. One that is expected
    // but not running now is left to the controller call, which answers "no healthy controller".
    if (plugin.ControllersExpected === 0 && Object.keys(plugin.Controllers).length === 0) {
      throw new BerthError(
        "ERR_CSI_NOT_SUPPORTED",
        `plugin ${JSON.stringify(v.PluginID)} has no controller to create volumes`,
      );
    }
  }

  private async validateWithController(v: CSIVolume, signal?: AbortSignal): Promise<void> {
    await this.deps.controllers.call(
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
}

function requirePlugin(state: StateReader, v: CSIVolume, i: number): CSIPlugin {
  const plugin = state.getPlugin(v.PluginID);
  if (!plugin) {
    throw validationError(
      `Volumes[${i}].PluginID`,
      `no CSI plugin named ${JSON.stringify(v.PluginID)} is running`,
    );
  }
  return plugin;
}

function inUse(vol: CSIVolume): BerthError {
  const n =
    Object.keys(vol.ReadClaims).length +
    Object.keys(vol.WriteClaims).length +
    Object.keys(vol.PastClaims).length;
  return new BerthError("ERR_CSI_IN_USE", `volume ${JSON.stringify(vol.ID)} in use: ${n} claim(s) remain`);
}
