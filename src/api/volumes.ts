/**
 * The CSI volume routes of the API client (Nomad's api/csi.go, `CSIVolumes()`), snapshots
 * included as Nomad keeps them there, plus berth's interrupted-create orphans. CSI secrets travel
 * in a header (secretsHeader), never in a URL.
 */
import { enc, listQuery, paging, secretsHeader, type ApiTransport, type ListOptions } from "./transport.js";
import type {
  CSISnapshot,
  CSISnapshotListResponse,
  CSIVolume,
  CSIVolumeExternalListResponse,
  CSIVolumeListStub,
  CSIVolumeOrphan,
  CSIVolumeSpec,
  CSIVolumeUsageField,
  CSIVolumeWithClaims,
} from "./types.js";

type Secrets = { secrets?: Record<string, string> };

export class VolumesApi {
  constructor(private readonly t: ApiTransport) {}

  /** `nodeId` / `pluginId`: volumes claimed on that node / of that plugin (Nomad's node_id, plugin_id). */
  list(opts: ListOptions & { nodeId?: string; pluginId?: string } = {}): Promise<CSIVolumeListStub[]> {
    const { nodeId, pluginId, ...list } = opts;
    return this.t.request("GET", "/v1/volumes", {
      query: {
        type: "csi",
        node_id: nodeId || undefined,
        plugin_id: pluginId || undefined,
        ...listQuery(list),
      },
    });
  }
  /**
   * The volume with berth's claim records (`?claims=true`) and its measured usage and health
   * (`?usage=true`), which `volume status` shows.
   */
  info(id: string): Promise<CSIVolumeWithClaims & CSIVolumeUsageField> {
    return this.t.request("GET", `/v1/volume/csi/${enc(id)}`, { query: { claims: "true", usage: "true" } });
  }
  /**
   * Registers existing storage (the spec names its `ExternalID`). A spec without an ID is still
   * sent, so the server's validation error reaches the user.
   */
  async register(vol: CSIVolumeSpec): Promise<void> {
    await this.t.request("PUT", `/v1/volume/csi/${enc(vol.ID ?? "")}`, { body: { Volumes: [vol] } });
  }
  /** Answers the warnings of a forced deregister (attachments that may be left behind), or []. */
  async deregister(id: string, opts: { force?: boolean } = {}): Promise<string[]> {
    const res = await this.t.request<{ Warnings?: string[] } | undefined>(
      "DELETE",
      `/v1/volume/csi/${enc(id)}`,
      {
        query: { force: String(opts.force ?? false) },
      },
    );
    return res?.Warnings ?? [];
  }
  /** Creates the volume through its controller plugin; answers with the created volumes. */
  async create(vol: CSIVolumeSpec): Promise<CSIVolume[]> {
    const path = `/v1/volume/csi/${enc(vol.ID ?? "")}/create`;
    const res = await this.t.request<{ Volumes: CSIVolume[] | null } | undefined>("PUT", path, {
      body: { Volumes: [vol] },
    });
    return res?.Volumes ?? [];
  }
  /** Deletes the storage through the controller plugin. */
  async delete(id: string, opts: Secrets = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/volume/csi/${enc(id)}/delete`, {
      headers: secretsHeader(opts.secrets),
    });
  }
  /** Releases the claims allocs on `nodeId` hold on the volume (they must have stopped). */
  async detach(id: string, nodeId: string): Promise<void> {
    await this.t.request("DELETE", `/v1/volume/csi/${enc(id)}/detach`, { query: { node: nodeId } });
  }
  /** The plugin's own volume list (ListVolumes). */
  listExternal(
    pluginId: string,
    opts: { perPage?: number; nextToken?: string } = {},
  ): Promise<CSIVolumeExternalListResponse> {
    return this.t.request("GET", "/v1/volumes/external", { query: { plugin_id: pluginId, ...paging(opts) } });
  }

  /** Interrupted creates whose storage no berth volume records (berth's addition). */
  async listOrphans(opts: { pluginId?: string } = {}): Promise<CSIVolumeOrphan[]> {
    const query = { type: "csi", plugin_id: opts.pluginId || undefined };
    return (await this.t.request<CSIVolumeOrphan[] | null>("GET", "/v1/volumes/orphans", { query })) ?? [];
  }
  /** Completes an interrupted create: its storage is recorded as volume `id`. */
  async adoptOrphan(id: string): Promise<CSIVolume[]> {
    const path = `/v1/volume/csi/${enc(id)}/adopt`;
    const res = await this.t.request<{ Volumes: CSIVolume[] | null } | undefined>("PUT", path);
    return res?.Volumes ?? [];
  }
  /** Deletes the storage of an interrupted create through the plugin. */
  async deleteOrphan(id: string, opts: Secrets = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/volume/csi/${enc(id)}/orphan`, {
      headers: secretsHeader(opts.secrets),
    });
  }

  /** Snapshots the volume; `name` may be empty (the server then names it). */
  async createSnapshot(
    volumeId: string,
    name: string,
    opts: Secrets & { parameters?: Record<string, string> } = {},
  ): Promise<CSISnapshot[]> {
    const snapshot = {
      SourceVolumeID: volumeId,
      Name: name,
      Secrets: opts.secrets ?? {},
      Parameters: opts.parameters ?? {},
    };
    const res = await this.t.request<{ Snapshots: CSISnapshot[] | null } | undefined>(
      "PUT",
      "/v1/volumes/snapshot",
      {
        body: { Snapshots: [snapshot] },
      },
    );
    return res?.Snapshots ?? [];
  }
  async deleteSnapshot(pluginId: string, snapshotId: string, opts: Secrets = {}): Promise<void> {
    await this.t.request("DELETE", "/v1/volumes/snapshot", {
      query: { plugin_id: pluginId, snapshot_id: snapshotId },
      headers: secretsHeader(opts.secrets),
    });
  }
  listSnapshots(
    pluginId: string,
    opts: Secrets & { perPage?: number; nextToken?: string } = {},
  ): Promise<CSISnapshotListResponse> {
    return this.t.request("GET", "/v1/volumes/snapshot", {
      query: { plugin_id: pluginId, ...paging(opts) },
      headers: secretsHeader(opts.secrets),
    });
  }
}
