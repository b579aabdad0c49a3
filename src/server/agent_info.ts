/**
 * What the agent tells its server's HTTP API about itself, for Nomad's agent routes
 * (`/v1/agent/self`, `/v1/agent/health`): its configuration as shown (no secrets), and its own
 * node agent when it runs one in the same process. Read at request time, so a node agent started
 * after the server is seen.
 */
export interface AgentInfo {
  config: {
    Region: string;
    Datacenter: string;
    NodeName: string;
    DataDir: string;
    Version: string;
    ServerEnabled: boolean;
    ClientEnabled: boolean;
    AclEnabled: boolean;
  };
  /** The node agent of this process: whether it holds a connection to a server; null: none. */
  client(): { connected: boolean } | null;
}
