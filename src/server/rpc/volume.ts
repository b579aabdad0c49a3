/**
 * Volume endpoints: register/deregister existing storage, create/delete through a controller
 * plugin, and reads. Specs arrive validated (validateVolumeSpec). Operations that touch a plugin or
 * claims hold the volume's lock, so they never interleave with a claim or release of that volume.
 */
import { BerthError, asBerthError, notFound } from "../../structs/errors.js";
import { isUnclaimed, type CSIVolume } from "../../structs/volume.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import { volumeListView, volumeView } from "../state/views.js";
import type { CSIVolumeExternalStub } from "../../structs/snapshot.js";
import { ClaimEndpoint } from "./claim.js";
import { allClaimsOf } from "./volume_claims.js";
import { detachVolume, refuseRunning, releaseClaimsOrLeave } from "./volume_detach.js";
import { OrphanEndpoint } from "../orphans/endpoint.js";
import { createVolumes } from "./volume_create.js";
import { registerVolumes } from "./volume_register.js";
import { SnapshotEndpoint } from "./volume_snapshot.js";

export class VolumeEndpoint {
  /** Snapshots live on the plugin; this endpoint only runs their controller calls. */
  readonly snapshots: SnapshotEndpoint;
  /** Storage of interrupted creates (server/orphans/): list, adopt, delete. */
  readonly orphans: OrphanEndpoint;
  /** The release walk, shared with the node agents' CSIVolume.Unpublish (it is stateless). */
  private readonly claims: ClaimEndpoint;

  constructor(private readonly deps: ServerDeps) {
    this.snapshots = new SnapshotEndpoint(deps);
    this.orphans = new OrphanEndpoint(deps);
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

  /** All or nothing; see volume_register.ts. */
  register(vols: CSIVolume[], signal?: AbortSignal): Promise<{ Index: number; Volumes: CSIVolume[] }> {
    return registerVolumes(this.deps, vols, signal);
  }

  /**
   * Refused while any claim (live or releasing) remains, unless forced. Forced: refused while an
   * alloc that still runs holds a claim; otherwise every claim is released first (node step on live
   * nodes, ControllerUnpublish through any live controller). A claim whose release waits only
   * because no usable controller of its plugin exists (AwaitingControllerError) is dropped with the
   * volume — the operator's way out when that controller will never return — and each such claim
   * comes back in `Warnings` (also logged at WARN): the volume's external ID may still be attached
   * on that node. Any other release failure refuses the deregister. An unknown volume is a 404 with
   * Nomad's text ("volume not found: ID"), so a typo is never reported as done.
   */
  async deregister(
    namespace: string,
    id: string,
    force: boolean,
    signal?: AbortSignal,
  ): Promise<{ Index: number; Warnings: string[] }> {
    const claimed = volumeView(this.deps.store, namespace, id);
    const warnings: string[] = [];
    if (force && claimed && !isUnclaimed(claimed)) {
      const held = allClaimsOf(claimed);
      refuseRunning(this.deps, claimed, held);
      const left = await releaseClaimsOrLeave(this.deps, this.claims, claimed, held, signal);
      for (const c of left) {
        warnings.push(
          `volume ${JSON.stringify(claimed.ID)} (external ID ${JSON.stringify(claimed.ExternalID)}) may still be attached on node ${c.NodeID}${c.ExternalNodeID ? ` (external node ID ${JSON.stringify(c.ExternalNodeID)})` : ""}: no controller of its plugin ran ControllerUnpublishVolume; detach it in the storage provider`,
        );
        this.deps.log.warn("forced deregister dropped a claim without ControllerUnpublishVolume", {
          volume: claimed.ID,
          external_id: claimed.ExternalID,
          node: c.NodeID,
          alloc: c.AllocationID,
        });
      }
    }
    return this.deps.volumeLocks.run(
      volumeKey(namespace, id),
      async () => {
        await this.deps.store.txn((tx) => {
          const vol = tx.getVolume(namespace, id);
          if (!vol) throw volumeNotFound(id);
          if (!force && !isUnclaimed(vol)) throw inUse(vol);
          tx.deleteVolume(namespace, id);
        });
        return { Index: this.deps.store.index(), Warnings: warnings };
      },
      signal,
    );
  }

  /** New volumes all or nothing (compensated through the plugin); see volume_create.ts. */
  create(vols: CSIVolume[], signal?: AbortSignal): Promise<{ Volumes: CSIVolume[]; Index: number }> {
    return createVolumes(this.deps, vols, signal);
  }

  /** Deletes the storage through the plugin, then the record. Refused while claimed; an unknown volume is a 404. */
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
        if (!vol) throw volumeNotFound(id);
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
            { requires: "SupportsCreateDelete", signal },
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
    if (!this.deps.store.pluginSummary(pluginId)) throw notFound("plugin", pluginId);
    const res = await this.deps.controllers.call(
      pluginId,
      "ClientCSI.ControllerListVolumes",
      { PluginID: pluginId, MaxEntries: page.perPage, StartingToken: page.nextToken },
      { requires: "SupportsListVolumes", signal },
    );
    return { Volumes: res.Entries.map((e) => ({ ...e })), NextToken: res.NextToken };
  }
}

/** Nomad's text for a deregister or delete of a volume it does not know (its state store's). */
function volumeNotFound(id: string): BerthError {
  return new BerthError("ERR_NOT_FOUND", `volume not found: ${id}`);
}

function inUse(vol: CSIVolume): BerthError {
  const n =
    Object.keys(vol.ReadClaims).length +
    Object.keys(vol.WriteClaims).length +
    Object.keys(vol.PastClaims).length;
  return new BerthError("ERR_CSI_IN_USE", `volume ${JSON.stringify(vol.ID)} in use: ${n} claim(s) remain`);
}
