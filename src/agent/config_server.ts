/**
 * The agent config's `server` block and the `server_join` block of both roles (Nomad's names):
 *
 *   server {
 *     enabled          = true
 *     bootstrap_expect = 3          # accepted; see below
 *     server_join { retry_join = ["10.0.0.1", "10.0.0.2"]  retry_max = 0  retry_interval = "30s" }
 *     etcd { endpoints = ["http://10.0.0.9:2379"] }        # berth's: state shared by several servers
 *     failover_heartbeat_ttl = "5m"
 *     client_introduction { enforcement = "warn" }
 *   }
 *   client {
 *     server_join { retry_join = ["10.0.0.1", "10.0.0.2:4647"] }   # dialled like `servers`
 *   }
 *
 * berth's servers do not gossip or vote among themselves: with `etcd` they share one state in
 * etcd, which also elects the leader, and each serves as soon as it starts; without it a server is
 * the only one. So `bootstrap_expect` (how many servers Nomad waits for before electing) and the
 * server's join addresses (whom Nomad's Serf contacts) are read and checked, then reported as
 * unused. A client's `server_join.retry_join` names servers to dial, as `servers` does (cloud
 * auto-join, `provider=…`, is skipped with a warning); berth's node agent retries them forever with
 * a capped backoff, so `retry_max` and `retry_interval` are reported as unused too.
 */
import type { Body } from "../api/specs/body.js";
import type { IntroSettings } from "../server/rpc/node_intro.js";
import { parseClientIntroduction } from "./config_intro.js";
import { parseEtcdBlock, type EtcdFileSetting } from "./config_etcd.js";

export interface ServerSetting {
  enabled?: boolean;
  bootstrapExpect?: number;
  etcd?: EtcdFileSetting;
  failoverHeartbeatTtlMs?: number;
  clientIntroduction?: Partial<IntroSettings>;
}

export function parseServer(server: Body, warnings: string[]): ServerSetting {
  const out: ServerSetting = {};
  const enabled = server.bool("enabled");
  if (enabled !== undefined) out.enabled = enabled;
  const etcd = server.block("etcd");
  if (etcd) out.etcd = parseEtcdBlock(etcd);
  const expect = server.integer("bootstrap_expect");
  if (expect !== undefined) {
    if (expect < 0) throw server.error(`bootstrap_expect must be 0 or more, got ${expect}`);
    out.bootstrapExpect = expect;
    if (expect > 1) {
      const how = out.etcd
        ? "berth's servers share their state in etcd, which elects the leader: each one serves as soon as it starts"
        : "without server { etcd } this server is the only one";
      warnings.push(`${server.file}: server.bootstrap_expect = ${expect} is not waited for: ${how}`);
    }
  }
  const joins: string[] = [];
  for (const key of ["start_join", "retry_join"]) {
    const list = server.stringList(key);
    if (list !== undefined && list.length > 0) joins.push(key);
  }
  const retryMax = server.integer("retry_max");
  if (retryMax !== undefined && retryMax < 0)
    throw server.error(`retry_max must be 0 or more, got ${retryMax}`);
  if (server.duration("retry_interval") !== undefined) joins.push("retry_interval");
  const join = server.block("server_join");
  if (join) {
    const j = parseJoinBlock(join);
    if (j.addresses.length > 0 || j.startJoin.length > 0) joins.push("server_join");
  }
  if (joins.length > 0) {
    warnings.push(
      `${server.file}: server ${joins.join(", ")}: accepted but not used: berth's servers find each ` +
        "other through etcd (server { etcd }), not by joining addresses",
    );
  }
  const failoverNs = server.duration("failover_heartbeat_ttl");
  if (failoverNs !== undefined) {
    if (failoverNs < 1e6) throw server.error("failover_heartbeat_ttl must be at least 1ms");
    out.failoverHeartbeatTtlMs = Math.round(failoverNs / 1e6);
  }
  const intro = server.block("client_introduction");
  if (intro) out.clientIntroduction = parseClientIntroduction(intro);
  server.finish();
  return out;
}

/** A `server_join` block, checked: Nomad's types and bounds. */
function parseJoinBlock(b: Body): { addresses: string[]; startJoin: string[]; retrySettings: boolean } {
  const addresses = b.stringList("retry_join") ?? [];
  const startJoin = b.stringList("start_join") ?? [];
  const retryMax = b.integer("retry_max");
  if (retryMax !== undefined && retryMax < 0) throw b.error(`retry_max must be 0 or more, got ${retryMax}`);
  const interval = b.duration("retry_interval");
  if (interval !== undefined && interval <= 0) throw b.error("retry_interval must be a positive duration");
  b.finish();
  return { addresses, startJoin, retrySettings: (retryMax ?? 0) !== 0 || interval !== undefined };
}

/**
 * A client's `server_join`: the retry_join addresses it dials (after `servers`, as Nomad's client
 * tries both). Nomad refuses start_join on a client; so does berth.
 */
export function parseClientServerJoin(client: Body, warnings: string[]): string[] | undefined {
  const b = client.block("server_join");
  if (!b) return undefined;
  const j = parseJoinBlock(b);
  if (j.startJoin.length > 0) throw b.error("start_join is not supported for clients; use retry_join");
  if (j.retrySettings) {
    warnings.push(
      `${b.file}: client.server_join retry_max, retry_interval: accepted but not used: berth's node ` +
        "agent retries its servers forever, with a capped backoff",
    );
  }
  const cloud = j.addresses.filter((a) => /(^|\s)provider=/.test(a));
  if (cloud.length > 0) {
    warnings.push(
      `${b.file}: client.server_join.retry_join: cloud auto-join (${cloud.map((c) => JSON.stringify(c)).join(", ")}) ` +
        "is skipped: berth dials the addresses it is given; list them",
    );
  }
  return j.addresses.filter((a) => !cloud.includes(a));
}
