/** The status routes of the API client (Nomad's api/status.go and Agent().Members()). */
import { AclApiClient } from "./client_acl.js";
import type { ServerMembers } from "./types.js";

export class StatusApiClient extends AclApiClient {
  /** The leader's "HOST:PORT", "" while there is none. */
  statusLeader(): Promise<string> {
    return this.request("GET", "/v1/status/leader");
  }
  statusPeers(): Promise<string[]> {
    return this.request("GET", "/v1/status/peers");
  }
  agentMembers(): Promise<ServerMembers> {
    return this.request("GET", "/v1/agent/members");
  }
}
