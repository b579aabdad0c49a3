/**
 * Where the CLI and UI find the agent and who they are to it. Each setting is the flag, else the
 * BERTH_* environment variable, else Nomad's NOMAD_* one (so a Nomad operator's shell works
 * unchanged), else the default.
 */
export const DEFAULT_ADDRESS = "http://127.0.0.1:4646";

type Env = NodeJS.ProcessEnv;

export function resolveAddress(flag: string | undefined, env: Env = process.env): string {
  const addr = flag || env.BERTH_ADDR || env.NOMAD_ADDR || DEFAULT_ADDRESS;
  // Nomad accepts a bare host:port; fetch needs a scheme.
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(addr) ? addr.replace(/\/+$/, "") : `http://${addr}`;
}

/** The connection settings every command takes (`-address`, `-namespace`, `-token`, `-region`). */
export interface Connection {
  address: string;
  /** Undefined: the server's default namespace. */
  namespace: string | undefined;
  /** Sent as X-Nomad-Token. */
  token: string | undefined;
  region: string | undefined;
}

export interface ConnectionFlags {
  address?: string | undefined;
  namespace?: string | undefined;
  token?: string | undefined;
  region?: string | undefined;
}

export function resolveConnection(flags: ConnectionFlags, env: Env = process.env): Connection {
  return {
    address: resolveAddress(flags.address, env),
    namespace: flags.namespace || env.BERTH_NAMESPACE || env.NOMAD_NAMESPACE || undefined,
    token: flags.token || env.BERTH_TOKEN || env.NOMAD_TOKEN || undefined,
    region: flags.region || env.BERTH_REGION || env.NOMAD_REGION || undefined,
  };
}
