/**
 * A server of an etcd cluster (cluster_mode.ts). The membership itself (cluster.ts) needs this
 * server's member record, so it is made in `join`, once the listener is bound; until its start
 * has read the cluster secret and the mirrors, the parts built earlier see no cluster: no leader
 * known (the scheduler front waits for one), per-process volume locks, no node held elsewhere, no
 * introduction key (ERR_RPC_UNAVAILABLE), and no node vouched for.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../internal/log.js";
import type { Telemetry } from "../../internal/metrics/telemetry.js";
import type { ServerTls } from "../../internal/tls.js";
import type { NodeConnections } from "../clientconn/connections.js";
import type { JobScheduler } from "../deps.js";
import type { IndexedStore } from "./await_index.js";
import { EtcdCluster, type EtcdSettings, type MemberOptions } from "./cluster.js";
import type { Cluster } from "./cluster_mode.js";
import { viewOnceJoined } from "./cluster_view.js";
import { contactRefusal } from "./contact.js";
import { DEFAULT_LEASE_TTL_SEC } from "./election.js";
import type { LeaderGate } from "./gate.js";
import type { ServerMember } from "./keys.js";
import { holdForLeaseTtl, SchedulerFront } from "./scheduler_front.js";
import type { LockBackend } from "./volume_locks.js";

export class EtcdMembership implements Cluster {
  /** Set once its start succeeded: etcd reached, the secret and the mirrors read. */
  private joined: EtcdCluster | undefined;
  private front: SchedulerFront | undefined;
  private readonly leaseTtlSec: number;
  readonly view = viewOnceJoined(() => this.joined);
  readonly shared = true;
  readonly introSecret = (): string | undefined => this.joined?.sharedSecret;

  constructor(
    private readonly etcd: EtcdSettings,
    private readonly member: MemberOptions,
    private readonly tls: ServerTls | undefined,
    private readonly conns: NodeConnections,
    private readonly log: Logger,
  ) {
    this.leaseTtlSec = member.leaseTtlSec ?? DEFAULT_LEASE_TTL_SEC;
  }

  /** Passes run on the leader: the endpoints reach it through the front (scheduler_front.ts). */
  endpointScheduler(local: JobScheduler, store: IndexedStore, telemetry: Telemetry): JobScheduler {
    this.front = new SchedulerFront(
      local,
      () => this.joined,
      store,
      { holdMs: holdForLeaseTtl(this.leaseTtlSec), telemetry },
      this.log.child("scheduler"),
    );
    return this.front;
  }

  lockBackend(): LockBackend | null {
    return this.joined?.volumeLocks ?? null;
  }

  heldElsewhere(): Iterable<string> {
    return this.joined?.heldElsewhere() ?? [];
  }

  contactRefusal(): string | undefined {
    return contactRefusal(this.joined, this.leaseTtlSec);
  }

  takePeerCall(req: IncomingMessage, res: ServerResponse): boolean {
    const c = this.joined;
    return !!c && (c.forwardServer.handle(req, res) || c.schedulerServer.handle(req, res));
  }

  async join(self: ServerMember, gate: LeaderGate, local: JobScheduler, store: IndexedStore): Promise<void> {
    const cluster = new EtcdCluster(
      { ...this.etcd, ...this.member },
      self,
      gate,
      this.conns,
      { local, store },
      this.tls,
      this.log.child("cluster"),
    );
    await cluster.start();
    this.joined = cluster;
  }

  async releaseWaiters(): Promise<void> {
    await this.front?.close();
  }

  async leave(): Promise<void> {
    await this.joined?.close();
  }
}
