/** The status routes of the API client (Nomad's api/status.go, `Status()`). */
import type { ApiTransport } from "./transport.js";

export class StatusApi {
  constructor(private readonly t: ApiTransport) {}

  /** The leader's "HOST:PORT", "" while there is none. */
  leader(): Promise<string> {
    return this.t.request("GET", "/v1/status/leader");
  }
  peers(): Promise<string[]> {
    return this.t.request("GET", "/v1/status/peers");
  }
}
