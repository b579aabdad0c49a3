/**
 * What the agent tells its server's API about itself (server/agent_info.ts): its settings as
 * `/v1/agent/self` shows them (no secrets), and its node agent, read at request time (the node
 * agent starts after the server).
 */
import fs from "node:fs";
import os from "node:os";
import type { Client } from "../client/client.js";
import type { AgentInfo } from "../server/agent_info.js";
import type { AgentOptions } from "./options.js";

/** The version in the package.json beside the compiled tree (dist/src/agent → the package root). */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

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
      Version: packageVersion(),
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
