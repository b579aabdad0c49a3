/**
 * The berth server: state store, scheduler, node liveness, the volumewatcher, the garbage
 * collector, the agent RPC endpoint and the HTTP API on one listener. The agent wiring only needs
 * this class.
 */
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { BerthError } from "../structs/errors.js";
import type { Logger } from "../internal/log.js";
import { ControllerClient } from "./clientconn/controller.js";
import { NodeConnections } from "./clientconn/connections.js";
import type { ServerDeps } from "./deps.js";
import type { DrainerOptions } from "./drainer/drainer.js";
import type { GcOptions } from "./gc/collector.js";
import { HeartbeatMonitor } from "./heartbeat.js";
import { createApiHandler, type ApiHandler } from "./http/api.js";
import { ConnLimiter, connectionCap, DEFAULT_CONN_LIMITS, type ConnLimits } from "./http/conn_limits.js";
import { ReadQueue } from "./http/read_queue.js";
import { AGENT_RPC_PATH, AgentRpcServer } from "./rpc/agent.js";
import { NO_HTTP_API_SETTINGS, OriginGuard, type HttpApiSettings } from "./http/origin.js";
import { boundAddressOf, parseAddr, warnIfExposed } from "./http/bind.js";
import type { NodeAuthLimits } from "./rpc/node_auth_limit.js";
import { AllocEndpoint } from "./rpc/alloc.js";
import { AllocOps } from "./rpc/alloc_ops.js";
import { ExecSockets } from "./http/exec_ws.js";
import { ClaimEndpoint } from "./rpc/claim.js";
import { JobLaunchEndpoint } from "./rpc/job_launch.js";
import { JobEndpoint } from "./rpc/job.js";
import { NamespaceEndpoint } from "./rpc/namespace.js";
import { NodeEndpoint } from "./rpc/node.js";
import { nodeIntroOf } from "./rpc/node_intro_key.js";
import type { IntroSettings } from "./rpc/node_intro.js";
import { PluginEndpoint } from "./rpc/plugin.js";
import { VolumeEndpoint } from "./rpc/volume.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import { openStateStore, type EtcdSettings } from "./state/open_store.js";
import type { StateStore } from "./state/store.js";
import type { GroupCommitLimits } from "./state/local/group_commit.js";
import type { VolumeWatcher, VolumeWatcherOptions } from "./volumewatcher/watcher.js";
import { DeploymentEndpoint } from "./deploymentwatcher/endpoint.js";
import type { DeploymentWatcherOptions } from "./deploymentwatcher/watcher.js";
import type { OrphanReconcilerOptions } from "./orphans/reconciler.js";
import type { ServerTls } from "../internal/tls.js";
import { attachRpcCertificateGate, createListener, logTlsHandshakeFailures } from "./tls_listener.js";
import { AclEndpoint, type AclOptions } from "./acl/endpoint.js";
import { execAuthorizer } from "./acl/exec.js";
import { LeaderGate, type GateState } from "./leader/gate.js";
import { ClusterLiveness } from "./leader/liveness.js";
import { contactRefusal } from "./leader/contact.js";
import { buildLeaderLoops } from "./leader/loops.js";
import { EtcdCluster, type MemberOptions } from "./leader/cluster.js";
import { ClusterKeyedMutex, mayAttach } from "./leader/volume_locks.js";
import { SoloCluster } from "./leader/cluster_view.js";
import { memberOf } from "./leader/member.js";
import { DEFAULT_LEASE_TTL_SEC } from "./leader/election.js";
import { holdForLeaseTtl, SchedulerFront } from "./leader/scheduler_front.js";
import { EventBroker, type EventBrokerOptions } from "./events/broker.js";
import { Telemetry } from "../internal/metrics/telemetry.js";
import { MeasuredScheduler } from "./metrics/measured_scheduler.js";
import { registerServerMetrics } from "./metrics/server_metrics.js";
import { VolumeUsageEndpoint } from "./rpc/volume_usage.js";
import { ClaimCensus } from "./volumewatcher/claim_census.js";
import type { ControllerConditionOptions } from "./volumecondition/poller.js";

export interface ServerOptions {
  /** Directory for the state file; null keeps state in memory (tests, -dev). */
  dataDir: string | null;
  /** host:port to listen on; port 0 picks a free one. */
  httpAddr: string;
  log: Logger;
  /** How long a node may go without a heartbeat before it is marked down. */
  heartbeatTtlMs?: number;
  /** The grace of every up node when this server starts leading (heartbeat.ts; default 5 min). */
  failoverHeartbeatTtlMs?: number;
  /** How long a down node keeps its plugin instances on the plugin records (default 5 min). */
  downNodePluginBoundMs?: number;
  /** Overrides of the volumewatcher's rate limits, backoff and node grace (tests set them short). */
  volumeWatcher?: Partial<VolumeWatcherOptions>;
  /** Overrides of the controller condition poll's interval, concurrency and call deadline. */
  controllerCondition?: Partial<ControllerConditionOptions>;
  /** Overrides of the garbage collector's interval and thresholds. */
  gc?: Partial<GcOptions>;
  /** Overrides of the node drainer's coalescing and backoff. */
  drainer?: Partial<DrainerOptions>;
  /** Overrides of the deployment watcher's coalescing and backoff. */
  deploymentWatcher?: Partial<DeploymentWatcherOptions>;
  /** Overrides of the orphan reconciler's interval. */
  orphans?: Partial<OrphanReconcilerOptions>;
  /** Listener limits and timeouts (`limits`; conn_limits.ts), failed node auths (node_auth_limit.ts). */
  limits?: Partial<ConnLimits & NodeAuthLimits>;
  /** HTTPS and mutual TLS on the listener (agent config `tls`; tls_listener.ts); absent: plain HTTP. */
  tls?: ServerTls;
  /** ACL tokens and policies (agent config `acl`); off when absent, as Nomad's default. */
  acl?: AclOptions;
  /** Response headers and allowed browser origins (agent config `http_api_response_headers`). */
  httpApi?: HttpApiSettings;
  /** Bounds of the state store's group commit (state/group_commit.ts); benchmarks compare. */
  groupCommit?: Partial<GroupCommitLimits>;
  /** The event stream's buffer size and timings (server/events/broker.ts); tests set them short. */
  events?: Partial<EventBrokerOptions>;
  /** The agent's metrics (agent config `telemetry`; shared with its client in -dev); default: Nomad's defaults. */
  telemetry?: Telemetry;
  /**
   * Several servers on etcd: the state (state/etcd_store.ts), leadership, membership and node call
   * forwarding (leader/); absent: SQLite, and this server is always the leader.
   */
  etcd?: EtcdSettings;
  /** Several servers: this server's name, lease TTL and datacenter (leader/cluster.ts). */
  member?: MemberOptions;
  /** `client_introduction`: node introduction tokens (rpc/node_intro.ts); Nomad's defaults. */
  intro?: Partial<IntroSettings>;
}

export const DEFAULT_HEARTBEAT_TTL_MS = 30_000;

export class Server {
  private readonly log: Logger;
  private store: StateStore | undefined;
  private http: http.Server | undefined;
  private api: ApiHandler | undefined;
  private agentRpc: AgentRpcServer | undefined;
  private execSockets: ExecSockets | undefined;
  /** Starts the leader-only loops on gaining leadership and stops them on losing it. */
  private gate: LeaderGate | undefined;
  private cluster: EtcdCluster | SoloCluster | undefined;
  private scheduler: Scheduler | undefined;
  /** With etcd: the endpoints' way to the leader's scheduler (leader/scheduler_front.ts). */
  private front: SchedulerFront | undefined;
  private conns: NodeConnections | undefined;
  private limiter: ConnLimiter | undefined;
  private address: string | undefined;
  private bound: string | undefined;
  private events: EventBroker | undefined;
  private unregisterMetrics: (() => void) | undefined;
  /** The volumewatcher of this server's current term as leader (its census feeds the metrics). */
  private watcher: VolumeWatcher | undefined;

  constructor(private readonly opts: ServerOptions) {
    this.log = opts.log.child("server");
  }

  /** "http://HOST:PORT" (https:// with TLS) once started. */
  get httpAddress(): string {
    if (!this.address) throw new BerthError("ERR_INTERNAL", "server not started");
    return this.address;
  }

  /** "HOST:PORT" the listener is really bound to (e.g. 0.0.0.0:4646), once started. */
  get boundAddress(): string {
    if (!this.bound) throw new BerthError("ERR_INTERNAL", "server not started");
    return this.bound;
  }

  /**
   * Whether this server runs the leader's loops now ("leader"), and since when (Date.now() once
   * they were all running); tests and the failover benchmark read it.
   */
  get leadership(): { state: GateState; since: number | null } {
    return { state: this.gate?.state ?? "follower", since: this.gate?.leaderSince ?? null };
  }

  async start(): Promise<void> {
    const { host, port } = parseAddr(this.opts.httpAddr);
    const store = await openStateStore({
      dataDir: this.opts.dataDir,
      log: this.log.child("state"),
      ...(this.opts.etcd ? { etcd: this.opts.etcd } : {}),
      ...(this.opts.groupCommit ? { groupCommit: this.opts.groupCommit } : {}),
    });
    this.store = store;
    // Follows the store's commits from before the first write, so a stream can resume from any.
    this.events = new EventBroker(store, this.log.child("events"), this.opts.events);
    this.events.start();
    const conns = new NodeConnections();
    this.conns = conns;
    const telemetry = this.opts.telemetry ?? new Telemetry();
    const scheduler = new MeasuredScheduler(store, this.log.child("scheduler"), telemetry);
    this.scheduler = scheduler;
    // With several servers, passes run on the leader: the endpoints reach it through the front.
    const front = this.opts.etcd
      ? new SchedulerFront(
          scheduler,
          () => (this.cluster instanceof EtcdCluster ? this.cluster : undefined),
          store,
          { holdMs: holdForLeaseTtl(this.opts.member?.leaseTtlSec ?? DEFAULT_LEASE_TTL_SEC), telemetry },
          this.log.child("scheduler"),
        )
      : undefined;
    this.front = front;
    const deps: ServerDeps = {
      store,
      scheduler: front ?? scheduler,
      conns,
      controllers: new ControllerClient(store, conns, this.log.child("controller")),
      // Cluster-wide on etcd once the server has joined (leader/volume_locks.ts).
      volumeLocks: new ClusterKeyedMutex(
        () => (this.cluster instanceof EtcdCluster ? this.cluster.volumeLocks : null),
        (key) => mayAttach(store, key),
      ),
      log: this.log,
    };
    const ttlMs = this.opts.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS;
    const liveness = new ClusterLiveness(
      ttlMs,
      () =>
        new HeartbeatMonitor(
          store,
          scheduler,
          ttlMs,
          this.log.child("heartbeat"),
          this.opts.downNodePluginBoundMs,
          this.opts.failoverHeartbeatTtlMs === undefined
            ? {}
            : { failoverMs: this.opts.failoverHeartbeatTtlMs },
        ),
      () => (this.cluster instanceof EtcdCluster ? this.cluster.heldElsewhere() : []),
      this.opts.etcd ? () => store.listNodes() : null,
    );
    const leaseTtlSec = this.opts.member?.leaseTtlSec ?? DEFAULT_LEASE_TTL_SEC;
    const secret = () => (this.cluster instanceof EtcdCluster ? this.cluster.sharedSecret : undefined);
    const vouch = () => contactRefusal(!!this.opts.etcd, this.cluster, leaseTtlSec);
    const node = new NodeEndpoint(deps, liveness, vouch, nodeIntroOf(this.opts, secret));
    const claim = new ClaimEndpoint(deps);
    const volumes = new VolumeEndpoint(deps);
    const loopParts = {
      ...this.opts,
      store,
      scheduler,
      claim,
      volumes,
      liveness,
      controllers: deps.controllers,
      volumeLocks: deps.volumeLocks,
      log: this.log,
      onVolumeWatcher: (w: VolumeWatcher | undefined) => (this.watcher = w),
      // The fence hold: the tasks' stop time + half a TTL (≥ 2 s), which covers a third of a TTL of
      // directory sweeps, the node's fence check and the clocks' rates (docs/design.md).
      volumeWatcher: {
        fenceMarginMs: Math.max(2_000, ttlMs / 2),
        minFenceHoldMs: 0,
        ...this.opts.volumeWatcher,
      },
    };
    const gate = new LeaderGate(() => buildLeaderLoops(loopParts), this.log.child("leader"));
    this.gate = gate;
    const allocOps = new AllocOps(deps);
    const acl = new AclEndpoint(store, this.opts.acl ?? { enabled: false });
    this.execSockets = new ExecSockets(allocOps, this.log.child("exec"), execAuthorizer(acl, store));
    const cluster = () => {
      if (!this.cluster) throw new BerthError("ERR_RPC_UNAVAILABLE", "the server is still starting");
      return this.cluster;
    };
    const guard = new OriginGuard(this.opts.httpApi ?? NO_HTTP_API_SETTINGS, this.log.child("http"));
    const handler = createApiHandler(
      {
        store,
        jobs: new JobEndpoint(deps),
        jobLaunch: new JobLaunchEndpoint(deps),
        allocs: new AllocEndpoint(deps),
        allocOps,
        nodes: node,
        volumes,
        plugins: new PluginEndpoint(deps),
        deployments: new DeploymentEndpoint(store, deps.scheduler),
        namespaces: new NamespaceEndpoint(store),
        acl,
        cluster: {
          get self() {
            return cluster().self;
          },
          // Still starting: no leader known yet (the headers say so rather than fail).
          leader: () => this.cluster?.leader() ?? null,
          lastContactMs: () => this.cluster?.lastContactMs() ?? 0,
          members: () => cluster().members(),
        },
        events: this.events,
        telemetry,
      },
      this.log.child("http"),
      guard,
    );
    this.api = handler;
    const limiter = new ConnLimiter(
      { ...DEFAULT_CONN_LIMITS, maxOpenConns: connectionCap(this.log.child("limits")), ...this.opts.limits },
      this.log.child("limits"),
    );
    this.limiter = limiter;
    // Reads take one turn of the event loop each, so writes never wait behind a pile of them.
    const reads = new ReadQueue(handler).listener;
    // Server-to-server calls are not API routes: node calls (leader/forward.ts) and scheduler
    // calls for the leader (leader/scheduler_forward.ts).
    const server = createListener(this.opts.tls, limiter.serverOptions(), (req, res) => {
      const c = this.cluster;
      if (
        c instanceof EtcdCluster &&
        (c.forwardServer.handle(req, res) || c.schedulerServer.handle(req, res))
      )
        return;
      reads(req, res);
    });
    this.http = server;
    // Each prepends its listeners, so the last attached runs first: the limiter (attached last),
    // then the origin guard refusing a browser's WebSocket, then the RPC gate refusing a peer
    // without a CA-signed certificate; only then do the RPC and exec handlers see an upgrade.
    attachRpcCertificateGate(server, this.opts.tls, AGENT_RPC_PATH, this.log.child("tls"));
    logTlsHandshakeFailures(server, this.opts.tls, this.log.child("tls"));
    guard.attach(server);
    limiter.attach(server);
    const usage = new VolumeUsageEndpoint(store);
    this.agentRpc = new AgentRpcServer(
      { node, claim, usage },
      conns,
      this.log.child("rpc"),
      this.opts.limits,
      ttlMs,
    );
    const exec = this.execSockets;
    this.agentRpc.attach(server, (req, socket, head) => exec?.handle(req, socket, head) ?? false);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    this.bound = boundAddressOf(addr);
    // The address this process's own client dials: a wildcard bind is reached on loopback.
    const scheme = this.opts.tls ? "https" : "http";
    const dialHost = addr.address === "0.0.0.0" ? "127.0.0.1" : addr.address === "::" ? "[::1]" : null;
    this.address = dialHost ? `${scheme}://${dialHost}:${addr.port}` : `${scheme}://${this.bound}`;
    // Claim figures come from the leader's volumewatcher; a follower has none to report.
    const noCensus = new ClaimCensus();
    this.unregisterMetrics = registerServerMetrics(telemetry, {
      store,
      census: () => (this.watcher ?? { census: noCensus }).census.snapshot(Date.now()),
      followupsArmed: () => scheduler.armedFollowups,
    });
    const self = memberOf(this.opts.member ?? {}, this.address, this.bound);
    if (this.opts.etcd) {
      const etcdCluster = new EtcdCluster(
        { ...this.opts.etcd, ...this.opts.member },
        self,
        gate,
        conns,
        { local: scheduler, store },
        this.opts.tls,
        this.log.child("cluster"),
      );
      await etcdCluster.start();
      this.cluster = etcdCluster;
    } else {
      this.cluster = new SoloCluster(self);
      await gate.gain();
    }
    this.log.info("server started", {
      http_bind: this.bound,
      data_dir: this.opts.dataDir ?? ":memory:",
      acl: acl.enabled,
    });
    warnIfExposed(this.log, addr, acl.enabled);
  }

  /**
   * Orderly stop: first nothing new comes in (agent RPC, node connections, HTTP) and the HTTP routes
   * in flight finish, then the leader gate is closed: every loop that writes is stopped and
   * awaited — node liveness, the volumewatcher, drainer, deployment watcher, GC, the orphan
   * reconciler — and a cluster member resigns (another server leads at once), then the
   * scheduler last (the loops start passes), which waits for its passes in flight, retries of
   * blocked jobs and follow-up timers; only then is the store closed, so no pass meets a closed
   * database.
   */
  async stop(): Promise<void> {
    this.events?.stop();
    this.unregisterMetrics?.();
    this.agentRpc?.close();
    this.execSockets?.close();
    this.conns?.closeAll();
    const server = this.http;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // Requests already inside a route finish (their clients are gone; their writes are not).
    this.limiter?.close();
    // Routes waiting for a leader give up now (ERR_ABORTED) rather than at the end of their hold.
    await this.front?.close();
    await this.api?.drain();
    // The loops stop before the resignation, so two servers' loops never overlap.
    await this.gate?.close("server stopping");
    if (this.cluster instanceof EtcdCluster) await this.cluster.close();
    await this.scheduler?.stop();
    this.store?.close();
    this.http = undefined;
    this.store = undefined;
    this.log.info("server stopped");
  }
}
