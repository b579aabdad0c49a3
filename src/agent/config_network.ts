/**
 * Where the agent listens and what it tells others to dial, with Nomad's names and default ports:
 *
 *   bind_addr = "10.0.0.5"          # every listener's address unless `addresses` says otherwise
 *   ports     { http = 4646  rpc = 4647 }
 *   addresses { http = "127.0.0.1"  rpc = "10.0.0.5" }
 *   advertise { http = "10.0.0.5"  rpc = "10.0.0.5:4647" }   # host, or host:port
 *
 * berth's HTTP listener serves the API and the node agents' RPC (/v1/agent/rpc). A server whose
 * config file enables it also accepts the same connections on the RPC port (4647 unless
 * `ports.rpc` says), as Nomad's servers take their clients there, so a Nomad client config with
 * `servers = ["10.0.0.5"]` or `["10.0.0.5:4647"]` reaches it unchanged (options.ts decides). The
 * `advertise` addresses are what the server records for its peers: `http` is where other servers
 * forward calls to it, `rpc` what /v1/status/leader and /v1/status/peers show. `serf` has no berth
 * equivalent (servers meet in etcd) and is dropped with a warning (config_triage.ts).
 */
import type { Body } from "../api/specs/body.js";

export interface NetworkSetting {
  bindAddr?: string;
  /** `ports { http }`. */
  httpPort?: number;
  /** `ports { rpc }`. */
  rpcPort?: number;
  /** `addresses { http }`. */
  httpAddress?: string;
  /** `addresses { rpc }`. */
  rpcAddress?: string;
  /** `advertise { http }`: "host" or "host:port". */
  advertiseHttp?: string;
  /** `advertise { rpc }`: "host" or "host:port". */
  advertiseRpc?: string;
}

export const NETWORK_KEYS = [
  "bindAddr",
  "httpPort",
  "rpcPort",
  "httpAddress",
  "rpcAddress",
  "advertiseHttp",
  "advertiseRpc",
] as const;

/** Nomad's default ports of the services berth has. */
export const DEFAULT_HTTP_PORT = 4646;
export const DEFAULT_RPC_PORT = 4647;

export function parseNetwork(top: Body): NetworkSetting {
  const out: NetworkSetting = {};
  const bind = top.string("bind_addr");
  if (bind !== undefined) out.bindAddr = checkHost(top, "bind_addr", bind);
  const ports = top.block("ports");
  if (ports) {
    const http = ports.integer("http");
    if (http !== undefined) out.httpPort = checkPort(ports, "http", http);
    const rpc = ports.integer("rpc");
    if (rpc !== undefined) out.rpcPort = checkPort(ports, "rpc", rpc);
    ports.finish();
  }
  const addresses = top.block("addresses");
  if (addresses) {
    const http = addresses.string("http");
    if (http !== undefined) out.httpAddress = checkHost(addresses, "http", http);
    const rpc = addresses.string("rpc");
    if (rpc !== undefined) out.rpcAddress = checkHost(addresses, "rpc", rpc);
    addresses.finish();
  }
  const advertise = top.block("advertise");
  if (advertise) {
    const http = advertise.string("http");
    if (http !== undefined) out.advertiseHttp = checkAdvertise(advertise, "http", http);
    const rpc = advertise.string("rpc");
    if (rpc !== undefined) out.advertiseRpc = checkAdvertise(advertise, "rpc", rpc);
    advertise.finish();
  }
  return out;
}

/**
 * One IP or host name to listen on. Nomad also takes go-sockaddr templates and several
 * space-separated addresses; berth listens on one address and evaluates no template.
 */
export function checkHost(b: Body, key: string, v: string): string {
  if (v.includes("{{")) throw b.error(`${key}: go-sockaddr templates are not supported; write the address`);
  if (/\s/.test(v.trim())) throw b.error(`${key}: berth listens on one address, got ${JSON.stringify(v)}`);
  const host = v.trim();
  if (!/^[A-Za-z0-9.-]+$/.test(host))
    throw b.error(`${key}: ${JSON.stringify(v)} is not an IPv4 address or host name`);
  return host;
}

function checkPort(b: Body, key: string, port: number): number {
  if (port < 0 || port > 65535) throw b.error(`${key} must be a port between 0 and 65535, got ${port}`);
  return port;
}

/** "host" or "host:port" that others can dial: not a wildcard, as Nomad refuses one. */
function checkAdvertise(b: Body, key: string, v: string): string {
  const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(v.trim());
  const host = m ? checkHost(b, key, m[1]!) : undefined;
  if (!m || host === undefined) throw b.error(`${key}: ${JSON.stringify(v)} is not host or host:port`);
  if (host === "0.0.0.0") throw b.error(`${key}: 0.0.0.0 cannot be dialled; advertise this host's address`);
  if (m[2] !== undefined) checkPort(b, key, Number(m[2]));
  return m[2] === undefined ? host : `${host}:${m[2]}`;
}

/** `host` → `host:port`; `host:port` stays. */
export function withPort(hostPort: string, port: number): string {
  return /:\d+$/.test(hostPort) ? hostPort : `${hostPort}:${port}`;
}
