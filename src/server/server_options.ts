/** What a server is started with (server.ts); the agent maps its flags and config file onto it. */
import type { JobspecParser } from "./jobspec_parser.js";
import type { AgentInfo } from "./agent_info.js";
import type { Logger } from "../internal/log.js";
import type { Telemetry } from "../internal/metrics/telemetry.js";
import type { ServerTls } from "../internal/tls.js";
import type { AclOptions } from "./acl/endpoint.js";
import type { DeploymentWatcherOptions } from "./deploymentwatcher/watcher.js";
import type { DrainerOptions } from "./drainer/drainer.js";
import type { EventBrokerOptions } from "./events/broker.js";
import type { GcOptions } from "./gc/collector.js";
import type { ConnLimits } from "./http/conn_limits.js";
import type { HttpApiSettings } from "./http/origin.js";
import type { AttachmentReconcileOptions } from "./leader/attachment_reconciler.js";
import type { MemberOptions } from "./leader/cluster.js";
import type { OrphanReconcilerOptions } from "./orphans/reconciler.js";
import type { NodeAuthLimits } from "./rpc/node_auth_limit.js";
import type { IntroSettings } from "./rpc/node_intro.js";
import type { EtcdSettings } from "./state/open_store.js";
import type { GroupCommitLimits } from "./state/local/group_commit.js";
import type { ControllerConditionOptions } from "./volumecondition/poller.js";
import type { CapacityPollOptions } from "./capacity/poller.js";
import type { VolumeWatcherOptions } from "./volumewatcher/watcher.js";

export interface ServerOptions {
  /** Directory for the state file; null keeps state in memory (tests, -dev). */
  dataDir: string | null;
  /** host:port to listen on; port 0 picks a free one. */
  httpAddr: string;
  /**
   * host:port of a second port serving the same listener (Nomad's RPC port, where node agents
   * dial; rpc_port.ts); absent: the HTTP port alone.
   */
  rpcAddr?: string;
  /** What peers are told to dial (`advertise`: "host" or "host:port"); absent: the listeners'. */
  advertise?: { http?: string; rpc?: string };
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
  /** Overrides of the attachment reconciler's interval, dry run and limits (leader/attachment_reconciler.ts). */
  attachmentReconcile?: Partial<AttachmentReconcileOptions>;
  /** Overrides of the capacity poll's interval, staleness, refresh delay and call deadline. */
  capacity?: Partial<CapacityPollOptions>;
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
  /** What the agent says of itself on `/v1/agent/self` and `/v1/agent/health` (agent_info.ts). */
  agentInfo?: AgentInfo;
  /** The jobspec reader of `/v1/jobs/parse` (jobspec_parser.ts); absent: the route answers 500. */
  jobspecParser?: JobspecParser;
}

export const DEFAULT_HEARTBEAT_TTL_MS = 30_000;
