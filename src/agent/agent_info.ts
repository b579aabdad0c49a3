/**
 * What the agent tells its server's API about itself (server/agent_info.ts): its settings as
 * `/v1/agent/self` shows them (no secrets), and its node agent, read at request time (the node
 * agent starts after the server).
 */
import os from "node:os";
import type { Client } from "../client/client.js";
import type { AgentInfo } from "../server/agent_info.js";
import type { AgentOptions } from "./options.js";
import { berthVersion } from "../api/version.js";

export function agentInfoOf(
  opts: AgentOptions,
  dataDir: string,
  aclEnabled: boolean,
  client: () => Client | null,
): AgentInfo {
  return {
    config: {
      Region: "global",
      Datacenter: opts.datacenter,
      NodeName: opts.nodeName ?? os.hostname(),
      DataDir: dataDir,
      Version: berthVersion(),
      ServerEnabled: opts.server,
      ClientEnabled: opts.client,
      AclEnabled: aclEnabled,
    },
    client: () => {
      const c = client();
      return c ? { connected: c.serverConnected } : null;
    },
  };
}
