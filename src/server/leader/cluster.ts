/**
 * A server's membership of an etcd cluster: the etcd client, the cluster secret, the election
 * (which drives the leader gate), the members and node directory mirrors, the forwarder of
 * node calls and the scheduler's path to the leader (scheduler_front.ts, scheduler_forward.ts).
 * A server's EtcdMembership (etcd_membership.ts) makes it when the server joins, once its listener
 * is bound (the member record carries the address), and closes it on stop once the leader loops
 * have stopped (resigning, so another server takes over at once).
 *
 * etcd unreachable at start: the server fails to start with an error naming the endpoints. etcd
 * lost later: the leader steps down within its lease TTL (election.ts); every server keeps
 * serving what does not need etcd, reports X-Nomad-KnownLeader: false, and rejoins by itself
 * when etcd answers again.
 */
import { randomBytes } from "node:crypto";
import { Etcd3 } from "etcd3";
import { BerthError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";
import type { ServerTls } from "../../internal/tls.js";
import type { NodeConnections } from "../clientconn/connections.js";
import type { JobScheduler } from "../deps.js";
import type { IndexedStore } from "./await_index.js";
import type { ClusterView } from "./cluster_view.js";
import { NodeDirectory, PrefixMirror } from "./directory.js";
import { LeaderElection } from "./election.js";
import { ForwardServer, Forwarder } from "./forward.js";
import type { LeaderGate } from "./gate.js";
import { HttpSchedulerPeer, SchedulerForwardServer, type SchedulerPeer } from "./scheduler_forward.js";
import { haKeys, parseMember, type HaKeys, type ServerMember } from "./keys.js";
import { EtcdLocks } from "./volume_locks.js";

/** ServerOptions.etcd: where the cluster's state and coordination live. */
export interface EtcdSettings {
  endpoints: string[];
  /** Key prefix of this cluster (several clusters may share one etcd). */
  prefix: string;
}

/** ServerOptions.member: how this server takes part. */
export interface MemberOptions {
  /** This server's name among the members (default: the host name); shown as `<name>.global`. */
  name?: string;
  /** This server's datacenter (default dc1). */
  datacenter?: string;
  /** Lease TTL of leadership and registrations in seconds (default 3; election.ts). */
  leaseTtlSec?: number;
}

/** How long a call to etcd may take before it fails (watches excepted). */
const ETCD_CALL_DEADLINE_MS = 3_000;

export function openEtcd(endpoints: string[]): Etcd3 {
  return new Etcd3({
    hosts: endpoints,
    dialTimeout: ETCD_CALL_DEADLINE_MS,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + ETCD_CALL_DEADLINE_MS }),
  });
}

export class EtcdCluster implements ClusterView {
  private readonly client: Etcd3;
  private readonly keys: HaKeys;
  private readonly election: LeaderElection;
  private readonly servers: PrefixMirror;
  private readonly directory: NodeDirectory;
  private secret = "";
  readonly forwarder: Forwarder;
  readonly forwardServer: ForwardServer;
  /** Scheduler calls: this server's way to the leader's scheduler, and the leader's receiving end. */
  readonly schedulerPeer: SchedulerPeer;
  readonly schedulerServer: SchedulerForwardServer;
  /** The cluster-wide half of the servers' per-volume lock (volume_locks.ts). */
  readonly volumeLocks: EtcdLocks;

  constructor(
    private readonly settings: EtcdSettings & MemberOptions,
    readonly self: ServerMember,
    gate: LeaderGate,
    private readonly conns: NodeConnections,
    /** The local scheduler, which runs the calls other servers send while this one leads. */
    scheduling: { local: JobScheduler; store: IndexedStore },
    tls: ServerTls | undefined,
    private readonly log: Logger,
  ) {
    this.client = openEtcd(settings.endpoints);
    this.keys = haKeys(settings.prefix);
    this.servers = new PrefixMirror(this.client, this.keys.servers, log);
    this.directory = new NodeDirectory(
      this.client,
      this.keys.nodeConns,
      self.ID,
      new PrefixMirror(this.client, this.keys.nodeConns, log),
      log,
    );
    this.election = new LeaderElection({
      client: this.client,
      keys: this.keys,
      self,
      ttlSec: settings.leaseTtlSec || undefined,
      log: log.child("election"),
      // The term's fence asks the election itself, so it fails the moment the session is stale.
      onGain: (term) =>
        void gate.gain({
          revision: term.revision,
          refusal: () => this.election.termRefusal(term.revision),
        }),
      onLose: (reason) => void gate.lose(reason),
    });
    this.volumeLocks = new EtcdLocks(
      this.client,
      this.keys.volumeLocks,
      self.ID,
      log.child("locks"),
      (leaseId) => this.election.sessionRefusal(leaseId),
    );
    this.election.onSession = (leaseId) => {
      this.directory.rebind(leaseId);
      this.volumeLocks.rebind(leaseId);
    };
    const secret = () => this.secret;
    this.forwarder = new Forwarder(self.ID, this.directory, this.servers, secret, tls, log.child("forward"));
    this.forwardServer = new ForwardServer(secret, conns, tls, log.child("forward"));
    this.schedulerPeer = new HttpSchedulerPeer(secret, tls);
    this.schedulerServer = new SchedulerForwardServer(
      secret,
      tls,
      () => this.isLeader,
      scheduling.local,
      scheduling.store,
      log.child("scheduler-forward"),
    );
  }

  /** The cluster secret once joined ("" before); node introduction derives its key from it. */
  get sharedSecret(): string {
    return this.secret;
  }

  /** Reads (or creates) the cluster secret and the mirrors, then joins the election. */
  async start(): Promise<void> {
    try {
      this.secret = await this.clusterSecret();
      await this.servers.start();
      await this.directory.mirror.start();
    } catch (err) {
      this.client.close();
      throw new BerthError(
        "ERR_RPC_UNAVAILABLE",
        `cannot reach etcd at ${this.settings.endpoints.join(", ")}: ${(err as Error).message}`,
      );
    }
    this.conns.listener = this.directory;
    this.conns.remote = this.forwarder;
    this.election.start();
  }

  /** Resigns (another server leads at once), stops the mirrors and closes the etcd client. */
  async close(): Promise<void> {
    this.conns.listener = undefined;
    this.conns.remote = undefined;
    this.volumeLocks.close();
    await this.election.stop();
    await this.servers.stop();
    await this.directory.mirror.stop();
    this.client.close();
  }

  get isLeader(): boolean {
    return this.election.isLeader;
  }

  /** Nodes whose connection another server holds (the leader counts them as heard from). */
  heldElsewhere(): Iterable<string> {
    return this.directory.heldElsewhere();
  }

  leader(): { member: ServerMember; sinceMs: number } | null {
    const l = this.election.leader;
    return l ? { member: l.member, sinceMs: l.term.sinceMs } : null;
  }

  lastContactMs(): number {
    return this.election.lastContactMs;
  }

  async members(): Promise<ServerMember[]> {
    let all: Record<string, string>;
    try {
      all = await this.client.getAll().prefix(this.keys.servers).strings();
    } catch (err) {
      throw new BerthError(
        "ERR_RPC_UNAVAILABLE",
        `cannot read the servers from etcd: ${(err as Error).message}`,
      );
    }
    return Object.values(all)
      .map((v) => parseMember(v))
      .filter((m): m is ServerMember => m !== null)
      .sort((a, b) => a.Name.localeCompare(b.Name));
  }

  /** The secret every server of the cluster shares: created by the first server, read by the rest. */
  private async clusterSecret(): Promise<string> {
    const key = this.keys.clusterSecret;
    const fresh = randomBytes(32).toString("base64url");
    const res = await this.client
      .if(key, "Create", "==", 0)
      .then(this.client.put(key).value(fresh))
      .else(this.client.get(key))
      .commit();
    if (res.succeeded) {
      this.log.info("generated the cluster's server-to-server secret");
      return fresh;
    }
    const stored = res.responses[0]?.response_range.kvs[0]?.value.toString("utf8") ?? "";
    if (stored === "") throw new Error(`the cluster secret under ${key} is empty`);
    return stored;
  }
}
