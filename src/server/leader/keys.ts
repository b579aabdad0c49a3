/**
 * Where the servers of one cluster meet in etcd, below the cluster's prefix (agent config
 * `server { etcd_prefix }`, default "/berth"), under `ha/` so the state store's own keys (the etcd
 * StateStore) never collide with them:
 *
 *   <prefix>/ha/leader              the leader's ServerMember (JSON), bound to its lease; created
 *                                   only when absent, so its create revision names the term
 *   <prefix>/ha/servers/<id>        each live server's ServerMember, bound to that server's lease
 *   <prefix>/ha/node-conns/<node>   the ID of the server holding the node agent's connection,
 *                                   bound to that server's lease (a dead server's entries vanish)
 *   <prefix>/ha/cluster-secret      the shared secret of server-to-server calls, created once
 *   <prefix>/ha/volume-locks/<ns>/<volume>
 *                                   the server holding the volume's lock, bound to its lease
 *                                   (volume_locks.ts)
 *
 * Only servers hold etcd credentials: what is stored here is read by servers alone.
 */
import { isObject } from "../../structs/json_check.js";

/** One server as the cluster sees it (the members list, the leader key). */
export interface ServerMember {
  /** Random per server process (a restarted server is a new member; its old entry expires). */
  ID: string;
  /** Nomad's member name: `<name>.<region>`. */
  Name: string;
  Region: string;
  Datacenter: string;
  /** Where the HTTP API and the agent RPC are served, e.g. http://127.0.0.1:4646. */
  HTTPAddr: string;
  /** HOST:PORT of the same listener: berth's RPC rides on the HTTP listener (/v1/agent/rpc). */
  RPCAddr: string;
  /** When the server started (unix ms). */
  StartTime: number;
}

export interface HaKeys {
  leader: string;
  servers: string;
  nodeConns: string;
  clusterSecret: string;
  volumeLocks: string;
}

export function haKeys(prefix: string): HaKeys {
  const base = `${prefix.replace(/\/+$/, "")}/ha/`;
  return {
    leader: `${base}leader`,
    servers: `${base}servers/`,
    nodeConns: `${base}node-conns/`,
    clusterSecret: `${base}cluster-secret`,
    volumeLocks: `${base}volume-locks/`,
  };
}

/** A stored member record; null when it is not one (a hand-written or foreign value). */
export function parseMember(text: string | undefined): ServerMember | null {
  if (text === undefined) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(v)) return null;
  const str = (k: string) => typeof v[k] === "string";
  if (!["ID", "Name", "Region", "Datacenter", "HTTPAddr", "RPCAddr"].every(str)) return null;
  if (typeof v.StartTime !== "number") return null;
  return v as unknown as ServerMember;
}
