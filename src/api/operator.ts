/**
 * The operator routes of the API client (Nomad's `Operator()`); berth's are the stored records the
 * server could not load (its quarantine).
 */
import { enc, type ApiTransport } from "./transport.js";
import type { QuarantinedRecord } from "./types.js";

export class OperatorApi {
  constructor(private readonly t: ApiTransport) {}

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
