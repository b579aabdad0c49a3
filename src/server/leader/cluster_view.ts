/**
 * What the HTTP API shows of the servers (the status routes, X-Nomad-KnownLeader and
 * X-Nomad-LastContact): a single server is its own leader and only member; a server of an etcd
 * cluster answers from its election and the members registered in etcd.
 */
import { BerthError } from "../../structs/errors.js";
import type { ServerMember } from "./keys.js";

export interface ClusterView {
  readonly self: ServerMember;
  /** The leader this server knows of; null while there is none (or etcd cannot tell). */
  leader(): { member: ServerMember; sinceMs: number } | null;
  /** Milliseconds since this server last had a live view of the leader (0 while it has one). */
  lastContactMs(): number;
  /** Every live server (for a cluster: read from etcd now; fails when etcd cannot be read). */
  members(): Promise<ServerMember[]>;
}

/**
 * The view of a cluster this server has not joined yet (its listener is not bound): no leader
 * known (the headers say so rather than fail), and `self` and `members()` fail with
 * ERR_RPC_UNAVAILABLE. Once `joined()` answers a view, every call goes to it.
 */
export function viewOnceJoined(joined: () => ClusterView | undefined): ClusterView {
  const current = (): ClusterView => {
    const view = joined();
    if (!view) throw new BerthError("ERR_RPC_UNAVAILABLE", "the server is still starting");
    return view;
  };
  return {
    get self() {
      return current().self;
    },
    leader: () => joined()?.leader() ?? null,
    lastContactMs: () => joined()?.lastContactMs() ?? 0,
    members: () => current().members(),
  };
}
