/**
 * Where the CLI and UI find the agent and who they are to it. Each setting is the flag, else the
 * BERTH_* environment variable, else Nomad's NOMAD_* one (so a Nomad operator's shell works
 * unchanged), else the default.
 */
import type { ApiTlsOptions } from "./tls.js";

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
  /** Client TLS for https:// addresses (api/tls.ts); absent when nothing was set. */
  tls?: ApiTlsOptions;
}

export interface ConnectionFlags {
  address?: string | undefined;
  namespace?: string | undefined;
  token?: string | undefined;
  region?: string | undefined;
  /** -ca-cert, -ca-path, -client-cert, -client-key, -tls-server-name, -tls-skip-verify. */
  caCert?: string | undefined;
  caPath?: string | undefined;
  clientCert?: string | undefined;
  clientKey?: string | undefined;
  tlsServerName?: string | undefined;
  tlsSkipVerify?: boolean | undefined;
}

export function resolveConnection(flags: ConnectionFlags, env: Env = process.env): Connection {
  return {
    address: resolveAddress(flags.address, env),
    namespace: flags.namespace || env.BERTH_NAMESPACE || env.NOMAD_NAMESPACE || undefined,
    token: flags.token || env.BERTH_TOKEN || env.NOMAD_TOKEN || undefined,
    region: flags.region || env.BERTH_REGION || env.NOMAD_REGION || undefined,
    ...withTls(resolveTls(flags, env)),
  };
}

/** Only a connection with some TLS setting carries `tls`. */
function withTls(t: ApiTlsOptions): { tls?: ApiTlsOptions } {
  return Object.values(t).some((v) => v !== undefined && v !== false) ? { tls: t } : {};
}

/** Nomad's TLS variables (NOMAD_CACERT, …), each after its flag and its BERTH_ twin. */
export function resolveTls(flags: ConnectionFlags, env: Env = process.env): ApiTlsOptions {
  const pick = (flag: string | undefined, name: string) =>
    flag || env[`BERTH_${name}`] || env[`NOMAD_${name}`] || undefined;
  return {
    caCert: pick(flags.caCert, "CACERT"),
    caPath: pick(flags.caPath, "CAPATH"),
    clientCert: pick(flags.clientCert, "CLIENT_CERT"),
    clientKey: pick(flags.clientKey, "CLIENT_KEY"),
    serverName: pick(flags.tlsServerName, "TLS_SERVER_NAME"),
    insecure:
      flags.tlsSkipVerify ?? envBool(env.BERTH_SKIP_VERIFY) ?? envBool(env.NOMAD_SKIP_VERIFY) ?? false,
  };
}

/**
 * NOMAD_SKIP_VERIFY as Nomad reads it (Go's strconv.ParseBool): 1/t/true → true; 0/f/false and
 * anything unparsable → false. Undefined when unset, so the next variable is asked.
 */
function envBool(v: string | undefined): boolean | undefined {
  if (v === undefined || v === "") return undefined;
  return ["1", "t", "T", "TRUE", "true", "True"].includes(v);
}
