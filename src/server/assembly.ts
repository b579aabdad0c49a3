/**
 * The parts of a server, built once by Server.start from its options, its opened state and its
 * cluster (leader/cluster_mode.ts), in dependency order: the endpoints' dependencies, the
 * endpoints, the leader's loops behind their gate, the API, and the listener with its gates.
 * Nothing here tests the cluster's mode: what differs is asked of the cluster.
 */
import { systemGc } from "./gc/system.js";
import type http from "node:http";
import type { Logger } from "../internal/log.js";
import { Telemetry } from "../internal/metrics/telemetry.js";
import { execAuthorizer } from "./acl/exec.js";
import { AclEndpoint } from "./acl/endpoint.js";
import { ControllerClient } from "./clientconn/controller.js";
import type { NodeConnections } from "./clientconn/connections.js";
import type { ServerDeps } from "./deps.js";
import type { HttpEndpoints } from "./request_ctx.js";
import { DeploymentEndpoint } from "./deploymentwatcher/endpoint.js";
import type { EventBroker } from "./events/broker.js";
import { HeartbeatMonitor } from "./heartbeat.js";
import { createApiHandler, type ApiHandler } from "./http/api.js";
import { ConnLimiter, connectionCap, DEFAULT_CONN_LIMITS } from "./http/conn_limits.js";
import { ExecSockets } from "./http/exec_ws.js";
import { NO_HTTP_API_SETTINGS, OriginGuard } from "./http/origin.js";
import { ReadQueue } from "./http/read_queue.js";
import type { Cluster } from "./leader/cluster_mode.js";
import { LeaderGate } from "./leader/gate.js";
import { ClusterLiveness } from "./leader/liveness.js";
import { PublishRefusals } from "./leader/attachment_hints.js";
import { buildLeaderLoops } from "./leader/loops.js";
import { ClusterKeyedMutex, mayAttach } from "./leader/volume_locks.js";
import { buildListener } from "./listener.js";
import { MeasuredScheduler } from "./metrics/measured_scheduler.js";
import { registerServerMetrics } from "./metrics/server_metrics.js";
import { AGENT_RPC_PATH, AgentRpcServer } from "./rpc/agent.js";
import { AllocEndpoint } from "./rpc/alloc.js";
import { AllocOps } from "./rpc/alloc_ops.js";
import { ClaimEndpoint } from "./rpc/claim.js";
import { JobEndpoint } from "./rpc/job.js";
import { JobLaunchEndpoint } from "./rpc/job_launch.js";
import { NamespaceEndpoint } from "./rpc/namespace.js";
import { NodeEndpoint } from "./rpc/node.js";
import { OperatorSnapshots } from "./operator_snapshot.js";
import { nodeIntroOf } from "./rpc/node_intro_key.js";
import { PluginEndpoint } from "./rpc/plugin.js";
import { VolumeEndpoint } from "./rpc/volume.js";
import { VolumeUsageEndpoint } from "./rpc/volume_usage.js";
import { DEFAULT_HEARTBEAT_TTL_MS, type ServerOptions } from "./server_options.js";
import type { StateStore } from "./state/store.js";
import { attachRpcCertificateGate } from "./tls_listener.js";
import { ClaimCensus } from "./volumewatcher/claim_census.js";
import type { VolumeWatcher } from "./volumewatcher/watcher.js";

/** Everything a started server holds; Server.stop closes it in its own order. */
export interface ServerParts {
  store: StateStore;
  events: EventBroker;
  conns: NodeConnections;
  cluster: Cluster;
  /** The local scheduler: the leader's loops start passes on it; the endpoints may go by the front. */
  scheduler: MeasuredScheduler;
  /** Starts the leader-only loops on gaining leadership and stops them on losing it. */
  gate: LeaderGate;
  acl: AclEndpoint;
  api: ApiHandler;
  agentRpc: AgentRpcServer;
  execSockets: ExecSockets;
  limiter: ConnLimiter;
  http: http.Server;
  unregisterMetrics: () => void;
}

/** What the state step opened; the cluster step made `conns`' forwarding its own. */
export interface Opened {
  store: StateStore;
  events: EventBroker;
  conns: NodeConnections;
  cluster: Cluster;
}

/** Builds every part of the server; nothing listens yet and no loop runs (the gate is closed). */
export function assembleServer(opts: ServerOptions, opened: Opened, log: Logger): ServerParts {
  const telemetry = opts.telemetry ?? new Telemetry();
  const publishRefusals = new PublishRefusals();
  const { deps, scheduler } = buildDeps(opened, telemetry, publishRefusals, log);
  const ttlMs = opts.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS;
  const liveness = buildLiveness(opts, opened, scheduler, ttlMs, log);
  const node = new NodeEndpoint(
    deps,
    liveness,
    () => opened.cluster.contactRefusal(),
    nodeIntroOf(opts, opened.cluster.introSecret),
  );
  const claim = new ClaimEndpoint(deps);
  const volumes = new VolumeEndpoint(deps);
  // The volumewatcher of this server's current term as leader (its census feeds the metrics).
  const watcher: { current?: VolumeWatcher | undefined } = {};
  const gate = buildGate(
    opts,
    { deps, scheduler, claim, volumes, liveness, publishRefusals, telemetry },
    ttlMs,
    watcher,
    log,
  );
  const web = buildApi(opts, opened, deps, { node, volumes, gate }, telemetry, log);
  const agentRpc = new AgentRpcServer(
    { node, claim, usage: new VolumeUsageEndpoint(opened.store) },
    opened.conns,
    log.child("rpc"),
    opts.limits,
    ttlMs,
  );
  let built: { http: http.Server; limiter: ConnLimiter };
  try {
    built = buildHttp(opts, opened.cluster, web, agentRpc, log);
  } catch (err) {
    // E.g. a TLS key the listener refuses: the RPC server's silence sweep must not outlive it.
    agentRpc.close();
    throw err;
  }
  const { http, limiter } = built;
  // Claim figures come from the leader's volumewatcher; a follower has none to report.
  const noCensus = new ClaimCensus();
  const unregisterMetrics = registerServerMetrics(telemetry, {
    store: opened.store,
    census: () => (watcher.current ?? { census: noCensus }).census.snapshot(Date.now()),
    followupsArmed: () => scheduler.armedFollowups,
  });
  return { ...opened, ...web, scheduler, gate, agentRpc, limiter, http, unregisterMetrics };
}

/**
 * The leader's loops behind their gate (leader/loops.ts, gate.ts): built afresh for each term from
 * the local scheduler (never the front), with the fence hold; `watcher` follows the term's
 * volumewatcher.
 */
function buildGate(
  opts: ServerOptions,
  parts: {
    deps: ServerDeps;
    scheduler: MeasuredScheduler;
    claim: ClaimEndpoint;
    volumes: VolumeEndpoint;
    liveness: ClusterLiveness;
    publishRefusals: PublishRefusals;
    telemetry: Telemetry;
  },
  ttlMs: number,
  watcher: { current?: VolumeWatcher | undefined },
  log: Logger,
): LeaderGate {
  const { deps, scheduler, claim, volumes, liveness, publishRefusals, telemetry } = parts;
  return new LeaderGate(
    () =>
      buildLeaderLoops({
        ...opts,
        store: deps.store,
        scheduler,
        claim,
        volumes,
        liveness,
        controllers: deps.controllers,
        volumeLocks: deps.volumeLocks,
        log,
        onVolumeWatcher: (w) => (watcher.current = w),
        publishRefusals,
        telemetry,
        volumeWatcher: fenceHold(ttlMs, opts),
      }),
    log.child("leader"),
  );
}

/** The HTTP API's side: its endpoints, ACLs, the origin guard and exec sessions. */
interface WebParts {
  acl: AclEndpoint;
  api: ApiHandler;
  guard: OriginGuard;
  execSockets: ExecSockets;
}

function buildApi(
  opts: ServerOptions,
  { store, events, cluster }: Opened,
  deps: ServerDeps,
  shared: { node: NodeEndpoint; volumes: VolumeEndpoint; gate: LeaderGate },
  telemetry: Telemetry,
  log: Logger,
): WebParts {
  const allocOps = new AllocOps(deps);
  const acl = new AclEndpoint(store, opts.acl ?? { enabled: false });
  const execSockets = new ExecSockets(allocOps, log.child("exec"), execAuthorizer(acl, store));
  const guard = new OriginGuard(opts.httpApi ?? NO_HTTP_API_SETTINGS, log.child("http"));
  const endpoints: HttpEndpoints = {
    store,
    jobs: new JobEndpoint(deps),
    jobLaunch: new JobLaunchEndpoint(deps),
    allocs: new AllocEndpoint(deps),
    allocOps,
    nodes: shared.node,
    volumes: shared.volumes,
    plugins: new PluginEndpoint(deps),
    deployments: new DeploymentEndpoint(store, deps.scheduler),
    namespaces: new NamespaceEndpoint(store),
    acl,
    cluster: cluster.view,
    events,
    telemetry,
    agent: opts.agentInfo,
    gc: systemGc(store, log.child("gc")),
    snapshots: new OperatorSnapshots({
      store,
      dataDir: opts.dataDir,
      berthVersion: opts.agentInfo?.config.Version ?? "unknown",
      gate: shared.gate,
      cluster: cluster.view,
      log: log.child("snapshot"),
    }),
    jobspec: opts.jobspecParser,
  };
  return { acl, api: createApiHandler(endpoints, log.child("http"), guard), guard, execSockets };
}

/**
 * The listener (listener.ts) with its limits: connections pass the limiter, then the origin guard,
 * then the RPC certificate gate, before the agent RPC or an exec session sees an upgrade; a request
 * is a server-to-server call of the cluster's, or else the API's (one read per event-loop turn).
 */
function buildHttp(
  opts: ServerOptions,
  cluster: Cluster,
  web: WebParts,
  agentRpc: AgentRpcServer,
  log: Logger,
): { http: http.Server; limiter: ConnLimiter } {
  const limiter = new ConnLimiter(
    { ...DEFAULT_CONN_LIMITS, maxOpenConns: connectionCap(log.child("limits")), ...opts.limits },
    log.child("limits"),
  );
  // Reads take one turn of the event loop each, so writes never wait behind a pile of them.
  const reads = new ReadQueue(web.api).listener;
  const server = buildListener({
    tls: opts.tls,
    options: limiter.serverOptions(),
    gates: [
      (s) => limiter.attach(s),
      (s) => web.guard.attach(s),
      (s) => attachRpcCertificateGate(s, opts.tls, AGENT_RPC_PATH, log.child("tls")),
    ],
    upgrades: (s) => agentRpc.attach(s, (req, socket, head) => web.execSockets.handle(req, socket, head)),
    takers: [
      (req, res) => cluster.takePeerCall(req, res),
      (req, res) => {
        reads(req, res);
        return true;
      },
    ],
    log: log.child("tls"),
  });
  return { http: server, limiter };
}

/**
 * The endpoints' dependencies. Passes run where the cluster says (`deps.scheduler`: the local
 * scheduler, or the front to the leader); the per-volume lock is cluster-wide once the server has
 * joined a cluster that has one (leader/volume_locks.ts).
 */
function buildDeps(
  { store, conns, cluster }: Opened,
  telemetry: Telemetry,
  publishRefusals: PublishRefusals,
  log: Logger,
): { deps: ServerDeps; scheduler: MeasuredScheduler } {
  const scheduler = new MeasuredScheduler(store, log.child("scheduler"), telemetry);
  const deps: ServerDeps = {
    store,
    scheduler: cluster.endpointScheduler(scheduler, store, telemetry),
    conns,
    controllers: new ControllerClient(store, conns, log.child("controller")),
    volumeLocks: new ClusterKeyedMutex(
      () => cluster.lockBackend(),
      (key) => mayAttach(store, key),
    ),
    log,
    publishRefused: (pluginId) => publishRefusals.refused(pluginId),
  };
  return { deps, scheduler };
}

/** Node liveness: every server takes heartbeats; the leader's monitor (a fresh one per term) acts. */
function buildLiveness(
  opts: ServerOptions,
  { store, cluster }: Opened,
  scheduler: MeasuredScheduler,
  ttlMs: number,
  log: Logger,
): ClusterLiveness {
  return new ClusterLiveness(
    ttlMs,
    () =>
      new HeartbeatMonitor(
        store,
        scheduler,
        ttlMs,
        log.child("heartbeat"),
        opts.downNodePluginBoundMs,
        opts.failoverHeartbeatTtlMs === undefined ? {} : { failoverMs: opts.failoverHeartbeatTtlMs },
      ),
    () => cluster.heldElsewhere(),
    cluster.shared ? () => store.listNodes() : null,
  );
}

/**
 * The volumewatcher's options with the fence hold: the tasks' stop time + half a TTL (≥ 2 s),
 * which covers a third of a TTL of directory sweeps, the node's fence check and the clocks' rates
 * (docs/design.md "Never two writers").
 */
function fenceHold(ttlMs: number, opts: ServerOptions): ServerOptions["volumeWatcher"] {
  return { fenceMarginMs: Math.max(2_000, ttlMs / 2), minFenceHoldMs: 0, ...opts.volumeWatcher };
}
