/** Servers sharing one etcd (state and coordination) for the leader tests, and HTTP helpers. */
import { Server } from "../../../src/server/server.js";
import type { ServerOptions } from "../../../src/server/server_options.js";
import { nullLogger } from "../../../src/internal/log.js";
import { eventually } from "../../helpers/agent_process.js";

let prefixes = 0;

/** The etcd prefix the last cluster() used. */
export let lastPrefix = "";

/** `n` started servers on etcd (a fresh prefix); if one fails to start, the others are stopped. */
export async function cluster(
  n: number,
  endpoint: string,
  heartbeatTtlMs = 60_000,
  extra: Partial<ServerOptions> = {},
): Promise<Server[]> {
  const prefix = `/cluster-test-${process.pid}-${prefixes++}`;
  lastPrefix = prefix;
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = new Server({
        dataDir: null,
        httpAddr: "127.0.0.1:0",
        log: nullLogger,
        heartbeatTtlMs,
        etcd: { endpoints: [endpoint], prefix },
        member: { name: `s${i}`, leaseTtlSec: 2 },
        ...extra,
      });
      servers.push(s);
      await s.start();
    }
  } catch (err) {
    for (const s of servers) await s.stop();
    throw err;
  }
  return servers;
}

export function leaders(servers: Server[]): Server[] {
  return servers.filter((s) => s.leadership.state === "leader");
}

export async function oneLeader(servers: Server[]): Promise<Server> {
  return eventually(
    "one leader",
    () => Promise.resolve(leaders(servers).length === 1 ? leaders(servers)[0] : undefined),
    20_000,
    20,
  );
}

export async function get(base: string, route: string) {
  const res = await fetch(base + route);
  return { status: res.status, headers: res.headers, json: (await res.json()) as unknown };
}

export const hostPort = (s: Server): string => new URL(s.httpAddress).host;
