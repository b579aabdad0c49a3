/** The agent routes of the API client (Nomad's api/agent.go, `Agent()`). */
import type { ApiTransport } from "./transport.js";
import type { ServerMembers } from "./types.js";

export class AgentApi {
  constructor(private readonly t: ApiTransport) {}

  /** The servers of the region, as Nomad's `GET /v1/agent/members`. */
  members(): Promise<ServerMembers> {
    return this.t.request("GET", "/v1/agent/members");
  }
}
