/**
 * Orphaned storage of interrupted volume creates: the list (GET /v1/volumes/orphans), adopt and
 * delete. Adopt and delete hold the volume's lock, as create, delete and claims do, so none of them
 * interleaves with another operation on that volume.
 *
 * - list: the orphans (decide.ts), each with the storage its plugin lists that no berth volume
 *   records, where the plugin's controller can list volumes (ListVolumes, all pages).
 * - adopt: completes the create. CreateVolume again with the intent's name and spec answers the
 *   storage the interrupted create made (CSI: idempotent by name; a create that never reached the
 *   plugin makes it now), and the volume is recorded under the intended ID with the intent removed,
 *   in one write. Refused (409) when that ID is now recorded otherwise, or the storage is already
 *   recorded as another volume.
 * - delete: removes the storage. CSI has no lookup by name, so berth learns the storage's ID the
 *   same way (CreateVolume with the intent's spec), then calls DeleteVolume and removes the intent.
 *   Storage a berth volume records is never deleted here: when the answer names such storage (it was
 *   registered after the crash), only the intent goes. When the plugin can list volumes and lists
 *   none that berth does not record, there is nothing to delete either: only the intent goes.
 */
import { BerthError, asBerthError, notFound } from "../../structs/errors.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { CSIVolumeOrphan, VolumeCreateIntent } from "../../structs/volume_intent.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import { volumeWake } from "../scheduler/blocked_wait.js";
import { volumeView } from "../state/views.js";
import { createStorage } from "../rpc/volume_create.js";
import { orphanIntents, orphanView, unrecordedStorage } from "./decide.js";

/** ListVolumes page size, and how many pages at most (a plugin that pages forever is cut off). */
const LIST_PAGE = 500;
const LIST_MAX_PAGES = 200;

type Listing = { unrecorded: string[] | null; error: string };

export class OrphanEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  /** The intents that are orphans now (decide.ts). */
  orphans(): VolumeCreateIntent[] {
    const busy = new Set(this.deps.volumeLocks.busyKeys);
    return orphanIntents(this.deps.store.listVolumeIntents(), (ns, id) => busy.has(volumeKey(ns, id)));
  }

  async list(
    filter: { namespace?: string; pluginId?: string },
    signal?: AbortSignal,
  ): Promise<CSIVolumeOrphan[]> {
    const orphans = this.orphans().filter(
      (o) =>
        (filter.namespace === undefined || o.Namespace === filter.namespace) &&
        (filter.pluginId === undefined || o.PluginID === filter.pluginId),
    );
    const listings = new Map<string, Listing>();
    for (const pluginId of new Set(orphans.map((o) => o.PluginID))) {
      listings.set(pluginId, await this.listing(pluginId, signal));
    }
    return orphans.map((o) => orphanView(o, listings.get(o.PluginID)!));
  }

  async adopt(
    namespace: string,
    id: string,
    signal?: AbortSignal,
  ): Promise<{ Volume: CSIVolume; Index: number }> {
    return this.deps.volumeLocks.run(
      volumeKey(namespace, id),
      async () => {
        const intent = this.orphan(namespace, id);
        const rec = this.deps.store.getVolume(namespace, id);
        if (rec) {
          throw new BerthError(
            "ERR_CONFLICT",
            `volume ${JSON.stringify(id)} is recorded with plugin ${JSON.stringify(rec.PluginID)} and name ${JSON.stringify(rec.Name)}: the interrupted create can only be deleted`,
          );
        }
        const { record } = await createStorage(this.deps, intent.Spec, signal);
        this.refuseRecorded(intent, record.ExternalID);
        await this.deps.store.txn((tx) => {
          if (tx.getVolume(namespace, id)) {
            throw new BerthError("ERR_CONFLICT", `volume ${JSON.stringify(id)} was recorded meanwhile`);
          }
          tx.putVolume(record);
          tx.deleteVolumeIntent(namespace, id);
        });
        this.deps.log.info("orphaned volume storage adopted", {
          volume: id,
          namespace,
          plugin: intent.PluginID,
          external_id: record.ExternalID,
        });
        void this.deps.scheduler.retryBlocked([volumeWake(namespace, id, record.PluginID)]);
        return { Volume: volumeView(this.deps.store, namespace, id)!, Index: this.deps.store.index() };
      },
      signal,
    );
  }

  async delete(
    namespace: string,
    id: string,
    secrets: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ Index: number }> {
    return this.deps.volumeLocks.run(
      volumeKey(namespace, id),
      async () => {
        const intent = this.orphan(namespace, id);
        const listing = await this.listing(intent.PluginID, signal);
        if (listing.unrecorded === null || listing.unrecorded.length > 0) {
          const spec = { ...intent.Spec, Secrets: { ...intent.Spec.Secrets, ...secrets } };
          const { record } = await createStorage(this.deps, spec, signal);
          const holder = this.holderOf(intent, record.ExternalID);
          if (holder) {
            // Recorded after the crash (e.g. registered): nothing is orphaned, the storage stays.
            await this.deps.store.txn((tx) => tx.deleteVolumeIntent(namespace, id));
            this.deps.log.info("interrupted create resolved: its storage is recorded as another volume", {
              volume: id,
              namespace,
              recorded_as: holder.ID,
              external_id: record.ExternalID,
            });
            return { Index: this.deps.store.index() };
          }
          try {
            await this.deps.controllers.call(
              intent.PluginID,
              "ClientCSI.ControllerDeleteVolume",
              { PluginID: intent.PluginID, ExternalVolumeID: record.ExternalID, Secrets: spec.Secrets },
              { requires: "SupportsCreateDelete", signal },
            );
          } catch (err) {
            if (asBerthError(err).code !== "ERR_CSI_NOT_FOUND") throw err;
          }
          this.deps.log.info("orphaned volume storage deleted", {
            volume: id,
            namespace,
            plugin: intent.PluginID,
            external_id: record.ExternalID,
          });
        }
        await this.deps.store.txn((tx) => tx.deleteVolumeIntent(namespace, id));
        return { Index: this.deps.store.index() };
      },
      signal,
    );
  }

  /** The intent of `namespace/id`, else a 404. Called under the volume's lock: not in flight. */
  private orphan(namespace: string, id: string): VolumeCreateIntent {
    const intent = this.deps.store.getVolumeIntent(namespace, id);
    if (!intent) throw notFound("orphaned volume (interrupted create)", id);
    return intent;
  }

  /** The berth volume that records `externalId` on the intent's plugin, if any. */
  private holderOf(intent: VolumeCreateIntent, externalId: string): CSIVolume | undefined {
    return this.deps.store
      .listVolumes({ pluginId: intent.PluginID })
      .find((v) => v.ExternalID === externalId);
  }

  /** Storage a berth volume records is never adopted twice. */
  private refuseRecorded(intent: VolumeCreateIntent, externalId: string): void {
    const holder = this.holderOf(intent, externalId);
    if (holder) {
      throw new BerthError(
        "ERR_CONFLICT",
        `the storage ${JSON.stringify(externalId)} named ${JSON.stringify(intent.Name)} is recorded as volume ${JSON.stringify(holder.ID)} in namespace ${JSON.stringify(holder.Namespace)}: delete the orphan to drop its record`,
      );
    }
  }

  /** What the plugin lists that no berth volume records; null (with the reason) when it cannot list. */
  private async listing(pluginId: string, signal?: AbortSignal): Promise<Listing> {
    const listed: string[] = [];
    let token = "";
    try {
      for (let page = 0; page < LIST_MAX_PAGES; page++) {
        const res = await this.deps.controllers.call(
          pluginId,
          "ClientCSI.ControllerListVolumes",
          { PluginID: pluginId, MaxEntries: LIST_PAGE, StartingToken: token },
          { requires: "SupportsListVolumes", signal },
        );
        listed.push(...res.Entries.map((e) => e.ExternalID));
        if (res.NextToken === "" || res.NextToken === token) {
          return {
            unrecorded: unrecordedStorage(listed, this.deps.store.listVolumes({ pluginId })),
            error: "",
          };
        }
        token = res.NextToken;
      }
      return {
        unrecorded: null,
        error: `the plugin's volume list did not end within ${LIST_MAX_PAGES} pages`,
      };
    } catch (err) {
      return { unrecorded: null, error: asBerthError(err).message };
    }
  }
}
