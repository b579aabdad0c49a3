/**
 * Nomad's RPC port for berth's server: a second port whose connections the one listener serves
 * (listener.ts), so node agents configured for Nomad (`servers = ["10.0.0.1:4647"]`) reach the
 * agent RPC there. Each accepted socket is handed to the listener as its own (`connection`, which
 * Node's HTTP server documents for injecting connections): the same gates see it first (connection
 * limits, TLS with its handshake bound, the RPC certificate gate), then the same routes; so the
 * port serves the whole API, as Nomad's RPC port serves every endpoint, under the same ACLs.
 * Closing the port stops new connections; the listener closes the ones it took.
 */
import type http from "node:http";
import net, { type AddressInfo } from "node:net";
import { boundAddressOf } from "./http/bind.js";

export interface RpcPort {
  addr: AddressInfo;
  /** "HOST:PORT" bound (e.g. 0.0.0.0:4647). */
  bound: string;
  /** "HOST:PORT" this host dials it at (a wildcard bind on loopback). */
  dial: string;
  close(): Promise<void>;
}

/** Binds `at` (port 0 picks a free one) and feeds its connections to `listener`; rejects on a bind error. */
export async function openRpcPort(
  listener: http.Server,
  at: { host: string; port: number },
): Promise<RpcPort> {
  const port = net.createServer((socket) => listener.emit("connection", socket));
  await new Promise<void>((resolve, reject) => {
    port.once("error", reject);
    port.listen(at.port, at.host, () => {
      port.off("error", reject);
      resolve();
    });
  });
  const addr = port.address() as AddressInfo;
  const bound = boundAddressOf(addr);
  const wildcard = addr.address === "0.0.0.0" ? "127.0.0.1" : addr.address === "::" ? "[::1]" : null;
  return {
    addr,
    bound,
    dial: wildcard ? `${wildcard}:${addr.port}` : bound,
    close: () => new Promise<void>((resolve) => port.close(() => resolve())),
  };
}
