/** This server's own member record, from its options and the address its listener got. */
import { randomUUID } from "node:crypto";
import os from "node:os";
import { TLS_REGION } from "../../internal/tls.js";
import type { ServerMember } from "./keys.js";

export function memberOf(
  opts: { name?: string; datacenter?: string },
  httpAddress: string,
  boundAddress: string,
  advertised: { http?: string; rpc?: string } = {},
): ServerMember {
  // The address others dial: the advertised one (agent config `advertise`), else the listener's
  // dial address (a wildcard bind is reached on loopback from this host; a cluster spread over
  // hosts binds each server to its own address or advertises it).
  const http = advertised.http ?? httpAddress;
  const rpc = advertised.rpc ?? (new URL(http).host || boundAddress);
  return {
    ID: randomUUID(),
    Name: `${opts.name ?? os.hostname()}.${TLS_REGION}`,
    Region: TLS_REGION,
    Datacenter: opts.datacenter ?? "dc1",
    HTTPAddr: http,
    RPCAddr: rpc,
    StartTime: Date.now(),
  };
}
