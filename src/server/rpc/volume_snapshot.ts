/**
 * Snapshot endpoints (Nomad's CSIVolume.CreateSnapshot/DeleteSnapshot/ListSnapshots). The plugin
 * is the source of truth for snapshots: the server keeps no record of them, it only runs the
 * controller calls. Creating a snapshot holds the source volume's lock, so it never interleaves
 * with a claim, release or expansion of that volume. Secrets reach the plugin and never an answer.
 */
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { isObject } from "../../structs/json_check.js";
import type { CSISnapshot } from "../../structs/snapshot.js";
import type { SnapshotInfo } from "../../structs/rpc.js";
import { volumeKey, type ServerDeps } from "../deps.js";
import { volumeView } from "../state/views.js";

/** One snapshot request, validated. */
export interface SnapshotRequest {
  SourceVolumeID: string;
  Name: string;
  Secrets: Record<string, string>;
  Parameters: Record<string, string>;
}

export class SnapshotEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  /** Creates each snapshot in turn; the first failure is the answer (earlier ones stay created). */
  async create(namespace: string, reqs: SnapshotRequest[], signal?: AbortSignal): Promise<CSISnapshot[]> {
    for (const [i, r] of reqs.entries()) {
      if (!volumeView(this.deps.store, namespace, r.SourceVolumeID)) {
        throw validationError(
          `Snapshots[${i}].SourceVolumeID`,
          `no volume ${JSON.stringify(r.SourceVolumeID)}`,
        );
      }
    }
    const out: CSISnapshot[] = [];
    for (const r of reqs) out.push(await this.createOne(namespace, r, signal));
    return out;
  }

  async delete(
    pluginId: string,
    snapshotId: string,
    secrets: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<void> {
    this.requirePlugin(pluginId);
    await this.deps.controllers.call(
      pluginId,
      "ClientCSI.ControllerDeleteSnapshot",
      { PluginID: pluginId, SnapshotID: snapshotId, Secrets: secrets },
      { requires: "SupportsCreateDeleteSnapshot", signal },
    );
    this.deps.log.info("snapshot deleted", { plugin: pluginId, snapshot: snapshotId });
  }

  async list(
    pluginId: string,
    page: { perPage: number; nextToken: string; secrets: Record<string, string> },
    signal?: AbortSignal,
  ): Promise<{ Snapshots: CSISnapshot[]; NextToken: string }> {
    this.requirePlugin(pluginId);
    const res = await this.deps.controllers.call(
      pluginId,
      "ClientCSI.ControllerListSnapshots",
      { PluginID: pluginId, MaxEntries: page.perPage, StartingToken: page.nextToken, Secrets: page.secrets },
      { requires: "SupportsListSnapshots", signal },
    );
    return {
      Snapshots: res.Entries.map((e) => toSnapshot(e, { PluginID: pluginId, SourceVolumeID: "", Name: "" })),
      NextToken: res.NextToken,
    };
  }

  private createOne(namespace: string, r: SnapshotRequest, signal?: AbortSignal): Promise<CSISnapshot> {
    return this.deps.volumeLocks.run(
      volumeKey(namespace, r.SourceVolumeID),
      async () => {
        const vol = volumeView(this.deps.store, namespace, r.SourceVolumeID);
        if (!vol) throw notFound("volume", r.SourceVolumeID);
        if (!vol.ExternalID) {
          throw new BerthError(
            "ERR_CONFLICT",
            `volume ${JSON.stringify(vol.ID)} has no storage behind it yet`,
          );
        }
        const info = await this.deps.controllers.call(
          vol.PluginID,
          "ClientCSI.ControllerCreateSnapshot",
          {
            PluginID: vol.PluginID,
            ExternalSourceVolumeID: vol.ExternalID,
            Name: r.Name,
            Secrets: { ...vol.Secrets, ...r.Secrets },
            Parameters: { ...r.Parameters },
          },
          { requires: "SupportsCreateDeleteSnapshot", signal },
        );
        this.deps.log.info("snapshot created", { volume: vol.ID, plugin: vol.PluginID, snapshot: info.ID });
        return toSnapshot(info, { PluginID: vol.PluginID, SourceVolumeID: vol.ID, Name: r.Name });
      },
      signal,
    );
  }

  private requirePlugin(pluginId: string): void {
    if (!this.deps.store.pluginSummary(pluginId)) throw notFound("plugin", pluginId);
  }
}

function toSnapshot(
  info: SnapshotInfo,
  extra: Pick<CSISnapshot, "PluginID" | "SourceVolumeID" | "Name">,
): CSISnapshot {
  return {
    ID: info.ID,
    ExternalSourceVolumeID: info.ExternalSourceVolumeID,
    SizeBytes: info.SizeBytes,
    CreateTime: info.CreateTime,
    IsReady: info.IsReady,
    ...extra,
    Secrets: null,
    Parameters: null,
  };
}

/**
 * Validates one element of `{"Snapshots": [...]}`. A missing Name is filled from the volume ID and
 * the time (the CSI spec requires a name; note that a retried request then makes a second one).
 */
export function parseSnapshotRequest(v: unknown, field: string, now = Date.now()): SnapshotRequest {
  if (!isObject(v)) throw validationError(field, "must be an object");
  const SourceVolumeID = checkId(`${field}.SourceVolumeID`, v.SourceVolumeID);
  const name = v.Name ?? "";
  if (typeof name !== "string") throw validationError(`${field}.Name`, "must be a string");
  return {
    SourceVolumeID,
    Name: name || `${SourceVolumeID}-${Math.floor(now / 1000)}`,
    Secrets: stringMap(`${field}.Secrets`, v.Secrets),
    Parameters: stringMap(`${field}.Parameters`, v.Parameters),
  };
}

/** A string→string map (null/absent is empty). Values are never echoed: they may be secrets. */
export function stringMap(field: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v) || Object.values(v).some((x) => typeof x !== "string")) {
    throw validationError(field, "must be an object of string values");
  }
  return { ...(v as Record<string, string>) };
}
