/**
 * Where the agent's server listens and which servers its node agent dials, from the flags over
 * the config files (config_network.ts), with Nomad's default ports:
 *
 * - HTTP: `-http-addr`, else `addresses.http` (or `bind_addr`, or 127.0.0.1) and `ports.http`
 *   (4646).
 * - RPC: Nomad's servers take their clients on the RPC port (4647). berth's node RPC rides its
 *   HTTP listener; a server also listens on `addresses.rpc` (or `bind_addr`) : `ports.rpc` (4647)
 *   and serves the same connections there when a config file enables the server or names an RPC
 *   port or address, so a Nomad client config (`servers = ["10.0.0.1"]` or `["10.0.0.1:4647"]`)
 *   reaches it unchanged. A server started by flags alone (`-server`, `-dev`) opens no second
 *   port, so several of them run side by side on one host as they always have.
 * - A server address given without a port (`-servers=10.0.0.1`, `servers = ["10.0.0.1"]`) is
 *   dialled at 4647, as Nomad's client dials it.
 */
import { BerthError } from "../structs/errors.js";
import type { AgentFileConfig } from "./config_file.js";
import { DEFAULT_HTTP_PORT, DEFAULT_RPC_PORT } from "./config_network.js";

export interface ListenerOptions {
  httpAddr: string;
  rpcAddr: string | null;
  advertise: { http?: string; rpc?: string };
  /** http(s)://HOST:PORT of each server to dial, in order. */
  servers: string[];
}

export function resolveListeners(
  flags: { httpAddr?: string; servers?: string },
  file: AgentFileConfig,
  server: boolean,
): ListenerOptions {
  const httpAddr =
    flags.httpAddr ??
    `${file.httpAddress ?? file.bindAddr ?? "127.0.0.1"}:${file.httpPort ?? DEFAULT_HTTP_PORT}`;
  if (!/^[^:\s]+:\d{1,5}$/.test(httpAddr)) {
    throw new BerthError("ERR_VALIDATION", `-http-addr: ${JSON.stringify(httpAddr)} is not HOST:PORT`);
  }
  const wantsRpc = file.serverEnabled === true || file.rpcPort !== undefined || file.rpcAddress !== undefined;
  let rpcAddr: string | null = null;
  if (server && wantsRpc) {
    const port = file.rpcPort ?? DEFAULT_RPC_PORT;
    rpcAddr = `${file.rpcAddress ?? file.bindAddr ?? "127.0.0.1"}:${port}`;
    // The same address twice is one listener (ports { http = 4646  rpc = 4646 }).
    if (rpcAddr === httpAddr && port !== 0) rpcAddr = null;
  }
  // The flag replaces the files' list (the agent fails over along it), and the flags win.
  const servers = (flags.servers === undefined ? (file.servers ?? []) : flags.servers.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(serverUrl);
  return {
    httpAddr,
    rpcAddr,
    advertise: { http: file.advertiseHttp, rpc: file.advertiseRpc },
    servers,
  };
}

/** `host` → http://host:4647, `host:port` → http://host:port; a URL stays as written. */
export function serverUrl(s: string): string {
  if (/^https?:\/\//i.test(s)) return s;
  const bare = /^[^:[\]]+$/.test(s) || /^\[[^\]]+\]$/.test(s);
  return `http://${bare ? `${s}:${DEFAULT_RPC_PORT}` : s}`;
}
