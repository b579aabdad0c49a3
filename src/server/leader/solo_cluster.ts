/**
 * A server without etcd (cluster_mode.ts): the only member, always the leader since it joined;
 * its endpoints call its scheduler directly, volume locks hold within this process, and it always
 * vouches for its nodes (it is the leader itself).
 */
import type { JobScheduler } from "../deps.js";
import type { Cluster } from "./cluster_mode.js";
import { viewOnceJoined, type ClusterView } from "./cluster_view.js";
import type { LeaderGate } from "./gate.js";
import type { ServerMember } from "./keys.js";

/** The view of a single server: itself, leading since it started. */
function soloView(self: ServerMember): ClusterView {
  return {
    self,
    leader: () => ({ member: self, sinceMs: self.StartTime }),
    lastContactMs: () => 0,
    members: () => Promise.resolve([self]),
  };
}

export class SoloCluster implements Cluster {
  private joined: ClusterView | undefined;
  readonly view = viewOnceJoined(() => this.joined);
  readonly shared = false;
  readonly introSecret = undefined;

  endpointScheduler(local: JobScheduler): JobScheduler {
    return local;
  }

  lockBackend(): null {
    return null;
  }

  heldElsewhere(): Iterable<string> {
    return [];
  }

  contactRefusal(): undefined {
    return undefined;
  }

  takePeerCall(): boolean {
    return false;
  }

  async join(self: ServerMember, gate: LeaderGate): Promise<void> {
    this.joined = soloView(self);
    await gate.gain();
  }

  async releaseWaiters(): Promise<void> {}

  async leave(): Promise<void> {}
}
