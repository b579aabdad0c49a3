/**
 * What the HTTP API shows of the servers (the status routes, X-Nomad-KnownLeader and
 * X-Nomad-LastContact): a single server is its own leader and only member; a server of an etcd
 * cluster answers from its election and the members registered in etcd.
 */
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

/** A server without etcd: the only member, always the leader since it started. */
export class SoloCluster implements ClusterView {
  constructor(readonly self: ServerMember) {}

  leader(): { member: ServerMember; sinceMs: number } {
    return { member: this.self, sinceMs: this.self.StartTime };
  }

  lastContactMs(): number {
    return 0;
  }

  members(): Promise<ServerMember[]> {
    return Promise.resolve([this.self]);
  }
}
