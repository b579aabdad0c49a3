/**
 * What a server is to its cluster, chosen once when it starts (open_cluster.ts, the one place that
 * tells a single server from a member of an etcd cluster): Server.start opens it right after the
 * state, builds its parts from it, and calls `join` once its listener is bound (the member record
 * carries the address). Every difference between the two modes is a member of `Cluster`, so the
 * server's assembly has no mode test:
 * - solo (solo_cluster.ts): the only member and always the leader; its endpoints call the local
 *   scheduler; volume locks are per process; it always vouches for its nodes.
 * - etcd (etcd_membership.ts): leadership, membership, node call forwarding and the scheduler's
 *   way to the leader (cluster.ts, scheduler_front.ts); a member still joining vouches for no node.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Telemetry } from "../../internal/metrics/telemetry.js";
import type { JobScheduler } from "../deps.js";
import type { IndexedStore } from "./await_index.js";
import type { ClusterView } from "./cluster_view.js";
import type { LeaderGate } from "./gate.js";
import type { ServerMember } from "./keys.js";
import type { LockBackend } from "./volume_locks.js";

export interface Cluster {
  /** What the API shows of the servers (status routes, leader headers); see viewOnceJoined. */
  readonly view: ClusterView;
  /** The scheduler the endpoints call: `local` itself, or a front that sends passes to the leader. */
  endpointScheduler(local: JobScheduler, store: IndexedStore, telemetry: Telemetry): JobScheduler;
  /** The cluster-wide half of the per-volume lock; null for a single server or before joining. */
  lockBackend(): LockBackend | null;
  /** Nodes whose connection another live server holds (the leader counts them as heard from). */
  heldElsewhere(): Iterable<string>;
  /** Whether other servers register nodes in the store too (the leader then sweeps it for them). */
  readonly shared: boolean;
  /** Why this server may not vouch for a node's liveness now (contact.ts), or undefined. */
  contactRefusal(): string | undefined;
  /** The secret node introduction keys derive from (rpc/node_intro_key.ts); undefined: its own key. */
  readonly introSecret: (() => string | undefined) | undefined;
  /** Answers a server-to-server call (forwarded node calls, scheduler calls); false: not one. */
  takePeerCall(req: IncomingMessage, res: ServerResponse): boolean;
  /**
   * Takes part as `self` once the listener is bound: a single server gains leadership at once; a
   * cluster member reads the cluster secret and joins the election (failing when etcd cannot be
   * reached). `local` and `store` run the scheduler calls other servers send while this one leads.
   */
  join(self: ServerMember, gate: LeaderGate, local: JobScheduler, store: IndexedStore): Promise<void>;
  /** Ends the waits of routes for a leader (ERR_ABORTED); called before the routes drain. */
  releaseWaiters(): Promise<void>;
  /** Resigns (another server leads at once) and closes the etcd client; after the loops stopped. */
  leave(): Promise<void>;
}
