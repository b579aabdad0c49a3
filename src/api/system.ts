/** The system routes of the API client (Nomad's api/system.go, `System()`); a management token. */
import type { ApiTransport } from "./transport.js";

export class SystemApi {
  constructor(private readonly t: ApiTransport) {}

  /** Forces a garbage collection of everything collectable, whatever its age. */
  async garbageCollect(): Promise<void> {
    await this.t.request("PUT", "/v1/system/gc");
  }
  /** Nomad's summary repair; berth keeps no summaries to repair, so it only checks the token. */
  async reconcileSummaries(): Promise<void> {
    await this.t.request("PUT", "/v1/system/reconcile/summaries");
  }
}
