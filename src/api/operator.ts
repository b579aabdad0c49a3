/**
 * The operator routes of the API client (Nomad's `Operator()`): state snapshots (Nomad's Snapshot
 * and SnapshotRestore), and berth's own, the stored records the server could not load (its
 * quarantine).
 */
import { createHash } from "node:crypto";
import { ApiError } from "./errors.js";
import { readSnapshotHeader, type SnapshotFileHeader } from "./snapshot_file.js";
import { enc, type ApiTransport } from "./transport.js";
import type { QuarantinedRecord } from "./types.js";

export class OperatorApi {
  constructor(private readonly t: ApiTransport) {}

  /**
   * A snapshot of the cluster's state (GET /v1/operator/snapshot): the file's bytes, checked
   * against the answer's Digest and its own header before they are returned, and its header.
   */
  async snapshot(opts: { stale?: boolean } = {}): Promise<{ file: Buffer; header: SnapshotFileHeader }> {
    const { body, headers } = await this.t.requestBytes("GET", "/v1/operator/snapshot", {
      query: { stale: opts.stale ? "true" : undefined },
    });
    const digest = headers.get("Digest");
    const want = `sha-256=${createHash("sha256").update(body).digest("base64")}`;
    if (digest !== null && digest !== want) {
      throw new ApiError(200, "snapshot: the file received does not match the server's Digest (cut short?)");
    }
    return { file: body, header: readSnapshotHeader(body) };
  }

  /** Restores a snapshot file (PUT /v1/operator/snapshot); resolves with the index after it. */
  async snapshotRestore(file: Buffer): Promise<{ Index: number }> {
    const body = new Uint8Array(file.length);
    body.set(file);
    const answer = await this.t.requestBytes("PUT", "/v1/operator/snapshot", { body });
    return JSON.parse(answer.body.toString("utf8")) as { Index: number };
  }

  quarantine(): Promise<QuarantinedRecord[]> {
    return this.t.request("GET", "/v1/operator/quarantine");
  }
  /**
   * Drops one entry for good. `namespace` matters for jobs and volumes only; the client's own
   * namespace, when it has one, wins (as for every call).
   */
  async deleteQuarantined(table: string, key: string, namespace?: string): Promise<void> {
    const ns = namespace ? `?namespace=${enc(namespace)}` : "";
    await this.t.request("DELETE", `/v1/operator/quarantine/${enc(table)}/${enc(key)}${ns}`);
  }
}
