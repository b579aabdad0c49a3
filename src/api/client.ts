/**
 * A typed client of berth's HTTP API (Nomad's `/v1` routes), in the shape of Nomad's `api`
 * package: one request core (transport.ts) and one route group per area, composed here —
 * `api.jobs.list()`, `api.allocations.info(id)`, `api.volumes.create(spec)`, `api.acl.policies()`.
 * Every method resolves with the decoded JSON answer or rejects with ApiError (the server said no)
 * or ConnectionError (nothing answered). The streamed routes (logs, exec) are functions over this
 * client (alloc_stream.ts, exec_session.ts, log_frames.ts) that use `transport` directly.
 */
import { AclApi } from "./acl.js";
import { AgentApi } from "./agent.js";
import { AllocationsApi } from "./allocations.js";
import { DeploymentsApi } from "./deployments.js";
import { EvaluationsApi } from "./evaluations.js";
import { JobsApi } from "./jobs.js";
import { NamespacesApi } from "./namespaces.js";
import { NodesApi } from "./nodes.js";
import { OperatorApi } from "./operator.js";
import { PluginsApi } from "./plugins.js";
import { StatusApi } from "./status.js";
import { SystemApi } from "./system.js";
import { ApiTransport, type ApiClientOptions } from "./transport.js";
import { VolumesApi } from "./volumes.js";

export class ApiClient {
  /** The request core the groups share; the streams build their requests from it. */
  readonly transport: ApiTransport;
  readonly jobs: JobsApi;
  readonly allocations: AllocationsApi;
  readonly evaluations: EvaluationsApi;
  readonly deployments: DeploymentsApi;
  readonly nodes: NodesApi;
  readonly namespaces: NamespacesApi;
  /** Nomad's CSIVolumes(), snapshots included. */
  readonly volumes: VolumesApi;
  /** Nomad's CSIPlugins(). */
  readonly plugins: PluginsApi;
  /** Nomad's ACLPolicies(), ACLTokens() and ACLIdentity(). */
  readonly acl: AclApi;
  readonly operator: OperatorApi;
  readonly status: StatusApi;
  readonly system: SystemApi;
  readonly agent: AgentApi;

  constructor(options: ApiClientOptions = {}) {
    const t = new ApiTransport(options);
    this.transport = t;
    this.jobs = new JobsApi(t);
    this.allocations = new AllocationsApi(t);
    this.evaluations = new EvaluationsApi(t);
    this.deployments = new DeploymentsApi(t);
    this.nodes = new NodesApi(t);
    this.namespaces = new NamespacesApi(t);
    this.volumes = new VolumesApi(t);
    this.plugins = new PluginsApi(t);
    this.acl = new AclApi(t);
    this.operator = new OperatorApi(t);
    this.status = new StatusApi(t);
    this.system = new SystemApi(t);
    this.agent = new AgentApi(t);
  }

  /** The agent address requests go to (after BERTH_ADDR and the default). */
  get address(): string {
    return this.transport.address;
  }
}
