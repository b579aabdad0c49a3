/**
 * What the server says about its listener: the address it is really bound to (a wildcard bind is
 * shown as the wildcard, never as the loopback address its own client dials), and a loud warning
 * when it listens beyond loopback with ACLs off — then anyone who can reach the address can run
 * tasks on every node and pose as a node.
 */
import type { AddressInfo } from "node:net";
import type { Logger } from "../../internal/log.js";
import { BerthError } from "../../structs/errors.js";

/** "0.0.0.0:4646", "[::]:4646", "127.0.0.1:4646". */
export function boundAddressOf(addr: AddressInfo): string {
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return `${host}:${addr.port}`;
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms: only this host can connect. */
export function isLoopback(address: string): boolean {
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.") || address === "::1";
}

export function warnIfExposed(log: Logger, addr: AddressInfo, aclEnabled: boolean): void {
  if (aclEnabled || isLoopback(addr.address)) return;
  const everywhere = addr.address === "0.0.0.0" || addr.address === "::";
  log.warn(
    `WARNING: the HTTP API and agent RPC listen on ${boundAddressOf(addr)}` +
      `${everywhere ? " (every network interface)" : ""} with ACLs disabled: anyone who can reach ` +
      "this address can run jobs on every node, create and delete volumes, and connect as a node. " +
      "Enable ACLs (acl { enabled = true }) or bind to 127.0.0.1.",
    { http_bind: boundAddressOf(addr), acl_enabled: false },
  );
}

/** `host:port` (or `[v6]:port`; an empty host is every interface) of the HTTP listener. */
export function parseAddr(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(addr);
  if (!m)
    throw new BerthError("ERR_VALIDATION", `http address ${JSON.stringify(addr)} is not host:port`, {
      field: "httpAddr",
    });
  return { host: m[1] ?? (m[2] || "0.0.0.0"), port: Number(m[3]) };
}
