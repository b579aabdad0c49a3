/**
 * The server's one listener (HTTP or HTTPS): the API, the agent RPC and exec WebSockets, and the
 * server-to-server calls. What runs in what order is data here, not a comment on attach calls:
 * - `gates` see every connection and upgrade before anything else, in the order listed (each
 *   prepends its listeners, so `buildListener` attaches them last-first);
 * - then the upgrades they let through reach `upgrades` (agent RPC, exec sessions);
 * - a request goes to the first of `takers` that takes it; the last must take every request.
 */
import type http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../internal/log.js";
import type { ServerTls } from "../internal/tls.js";
import { boundAddressOf } from "./http/bind.js";
import { createListener, logTlsHandshakeFailures } from "./tls_listener.js";

/** Answers the requests it takes; false leaves the request to the next taker. */
export type RequestTaker = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/** Attaches listeners that run before every listener attached earlier (prependListener). */
export type ListenerGate = (server: http.Server) => void;

export interface ListenerPlan {
  tls: ServerTls | undefined;
  /** Node's request options (timeouts, header limits; http/conn_limits.ts). */
  options: http.ServerOptions;
  /** In the order they see each connection and upgrade. */
  gates: readonly ListenerGate[];
  /** Attaches the upgrade handlers (appended: they run after every gate). */
  upgrades: (server: http.Server) => void;
  /** Tried in order; the first that takes a request answers it. */
  takers: readonly RequestTaker[];
  log: Logger;
}

export function buildListener(plan: ListenerPlan): http.Server {
  const server = createListener(plan.tls, plan.options, (req, res) => {
    for (const take of plan.takers) if (take(req, res)) return;
  });
  for (const gate of [...plan.gates].reverse()) gate(server);
  logTlsHandshakeFailures(server, plan.tls, plan.log);
  plan.upgrades(server);
  return server;
}

/** Where a listening server is: what it is bound to, and the URL this host dials it at. */
export interface ListenerAddress {
  addr: AddressInfo;
  /** "HOST:PORT" the listener is bound to (e.g. 0.0.0.0:4646). */
  bound: string;
  /** "http(s)://HOST:PORT"; a wildcard bind is reached on loopback. */
  url: string;
}

/** Binds `server` to `at` (http/bind.ts parseAddr; port 0 picks a free one); rejects on a bind error. */
export async function listen(
  server: http.Server,
  { host, port }: { host: string; port: number },
  tls: ServerTls | undefined,
): Promise<ListenerAddress> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const bound = boundAddressOf(addr);
  const scheme = tls ? "https" : "http";
  const dialHost = addr.address === "0.0.0.0" ? "127.0.0.1" : addr.address === "::" ? "[::1]" : null;
  return { addr, bound, url: dialHost ? `${scheme}://${dialHost}:${addr.port}` : `${scheme}://${bound}` };
}
