/**
 * What an API route handler gets (`Ctx`) and the endpoints it may call (`HttpEndpoints`); the ACL
 * guards and the event stream take them too. Handlers answer through http/respond.ts and
 * wire/http_io.ts and may throw coded errors.
 */
import type { SystemGc } from "./gc/system.js";
import type { JobspecParser } from "./jobspec_parser.js";
import type { AgentInfo } from "./agent_info.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { validationError } from "../structs/errors.js";
import { checkId } from "../structs/ids.js";
import { checkJobId } from "../structs/job_ids.js";
import type { DeploymentEndpoint } from "./deploymentwatcher/endpoint.js";
import type { AllocEndpoint } from "./rpc/alloc.js";
import type { AllocOps } from "./rpc/alloc_ops.js";
import type { JobEndpoint } from "./rpc/job.js";
import type { JobLaunchEndpoint } from "./rpc/job_launch.js";
import type { NamespaceEndpoint } from "./rpc/namespace.js";
import type { NodeEndpoint } from "./rpc/node.js";
import type { PluginEndpoint } from "./rpc/plugin.js";
import type { VolumeEndpoint } from "./rpc/volume.js";
import type { StateStore } from "./state/store.js";
import type { AclEndpoint, Identity } from "./acl/endpoint.js";
import type { EventBroker } from "./events/broker.js";
import type { Telemetry } from "../internal/metrics/telemetry.js";
import type { ClusterView } from "./leader/cluster_view.js";
import type { OperatorSnapshots } from "./operator_snapshot.js";

export interface HttpEndpoints {
  store: StateStore;
  jobs: JobEndpoint;
  /** Dispatch and periodic force (rpc/job_launch.ts). */
  jobLaunch: JobLaunchEndpoint;
  allocs: AllocEndpoint;
  allocOps: AllocOps;
  nodes: NodeEndpoint;
  volumes: VolumeEndpoint;
  plugins: PluginEndpoint;
  deployments: DeploymentEndpoint;
  namespaces: NamespaceEndpoint;
  /** ACL policies, tokens and token resolution (its `enabled` says whether routes are checked). */
  acl: AclEndpoint;
  /** The event stream's broker (server/events); absent where no server runs one. */
  events?: EventBroker;
  /** The agent's metrics (GET /v1/metrics, request latency); absent in tests that build no server. */
  telemetry?: Telemetry;
  /** The servers and their leader (status routes, X-Nomad-KnownLeader); absent in bare tests. */
  cluster?: ClusterView;
  /** The agent this server runs in (`/v1/agent/self|health`); absent for a bare server. */
  agent?: AgentInfo;
  /** `berth system gc` (server/gc/system.ts); absent in tests that build no server. */
  gc?: SystemGc;
  /** State snapshots (`/v1/operator/snapshot`); absent in tests that build no server. */
  snapshots?: OperatorSnapshots;
  /** `/v1/jobs/parse`'s jobspec reader (jobspec_parser.ts); absent for a bare server. */
  jobspec?: JobspecParser;
}

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string | undefined>;
  query: URLSearchParams;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** The caller's token and ACL; undefined when ACLs are off (server/acl/guards.ts). */
  identity?: Identity;
}

export type Route = (ctx: Ctx, api: HttpEndpoints) => Promise<void>;

/** `?namespace=` (default "default"); `*` means all namespaces, returned as undefined. */
export function namespaceOf(ctx: Ctx, allowAll = false): string | undefined {
  const ns = ctx.query.get("namespace") || "default";
  if (ns === "*") {
    if (!allowAll) throw validationError("namespace", "a single namespace is required here");
    return undefined;
  }
  return checkId("namespace", ns);
}

export function param(ctx: Ctx, name: string): string {
  return checkId(name, ctx.params[name]);
}

/** A job ID path parameter: a job's own ID or a launched child's (structs/job_ids.ts). */
export function jobParam(ctx: Ctx, name = "id"): string {
  return checkJobId(name, ctx.params[name]);
}
