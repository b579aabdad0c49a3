/**
 * A typed client of berth's HTTP API (Nomad's `/v1` routes). One method per route; every method
 * resolves with the decoded JSON answer or rejects with ApiError (the server said no) or
 * ConnectionError (nothing answered).
 */
import { enc, listQuery, newestFirst, paging, secretsHeader, type ListOptions } from "./client_base.js";

export type { ApiClientOptions, ListOptions } from "./client_base.js";
import { DeploymentApiClient } from "./client_deployments.js";
import type {
  Allocation,
  AllocResourceUsage,
  AllocationListStub,
  CSIPlugin,
  CSIPluginListStub,
  CSIVolume,
  CSIVolumeWithClaims,
  CSIVolumeUsageField,
  CSIVolumeListStub,
  CSIVolumeSpec,
  CSISnapshot,
  CSISnapshotListResponse,
  CSIVolumeExternalListResponse,
  CSIVolumeOrphan,
  Deployment,
  Evaluation,
  Job,
  JobDeregisterResponse,
  JobDispatchResponse,
  PeriodicForceResponse,
  JobListStub,
  JobRegisterResponse,
  JobValidateResponse,
  JobPlanResponse,
  JobVersionsResponse,
  Node,
  NodeListStub,
  NodeUpdateResponse,
  DrainSpec,
  DeploymentUpdateResponse,
  QuarantinedRecord,
  Namespace,
  NamespaceSpec,
} from "./types.js";

export class ApiClient extends DeploymentApiClient {
  // Jobs

  listJobs(opts: ListOptions = {}): Promise<JobListStub[]> {
    return this.request("GET", "/v1/jobs", { query: listQuery(opts) });
  }
  /** `checkIndex` (`job run -check-index`): register only if the job's JobModifyIndex is that. */
  registerJob(job: Job, opts: { checkIndex?: number } = {}): Promise<JobRegisterResponse> {
    const enforce =
      opts.checkIndex === undefined ? {} : { EnforceIndex: true, JobModifyIndex: opts.checkIndex };
    return this.request("PUT", "/v1/jobs", { body: { Job: job, ...enforce } });
  }
  /** The scheduler's dry run of the job, changing nothing (Nomad's `PUT /v1/job/:id/plan`). */
  planJob(job: Job, opts: { diff?: boolean } = {}): Promise<JobPlanResponse> {
    return this.request("PUT", `/v1/job/${enc(job.ID)}/plan`, {
      body: { Job: job, Diff: opts.diff ?? true },
    });
  }
  /** The job's kept versions, newest first (Nomad's `GET /v1/job/:id/versions`). */
  jobVersions(id: string, opts: { diffs?: boolean } = {}): Promise<JobVersionsResponse> {
    return this.request("GET", `/v1/job/${enc(id)}/versions`, {
      query: { diffs: opts.diffs ? "true" : undefined },
    });
  }
  /** The server's validation of a job, registering nothing (Nomad's `PUT /v1/validate/job`). */
  validateJob(job: Job): Promise<JobValidateResponse> {
    return this.request("PUT", "/v1/validate/job", { body: { Job: job } });
  }
  getJob(id: string): Promise<Job> {
    return this.request("GET", `/v1/job/${enc(id)}`);
  }
  deregisterJob(id: string, opts: { purge?: boolean } = {}): Promise<JobDeregisterResponse> {
    return this.request("DELETE", `/v1/job/${enc(id)}`, { query: { purge: String(opts.purge ?? false) } });
  }
  /** Nomad's `job dispatch`: a child of the parameterized job with `meta` and `payload` (bytes). */
  dispatchJob(
    id: string,
    opts: { meta?: Record<string, string>; payload?: Uint8Array; idempotencyToken?: string } = {},
  ): Promise<JobDispatchResponse> {
    const body: Record<string, unknown> = { JobID: id, Meta: opts.meta ?? {} };
    if (opts.payload && opts.payload.length > 0) body.Payload = Buffer.from(opts.payload).toString("base64");
    if (opts.idempotencyToken) body.IdempotencyToken = opts.idempotencyToken;
    return this.request("PUT", `/v1/job/${enc(id)}/dispatch`, { body });
  }
  /** Nomad's `job periodic force`: launches the periodic job's child now. */
  periodicForce(id: string): Promise<PeriodicForceResponse> {
    return this.request("PUT", `/v1/job/${enc(id)}/periodic/force`);
  }
  jobAllocations(id: string): Promise<AllocationListStub[]> {
    return this.request("GET", `/v1/job/${enc(id)}/allocations`);
  }
  /** The job's evaluations, newest first (as Nomad's client sorts them). */
  async jobEvaluations(id: string): Promise<Evaluation[]> {
    return newestFirst(await this.request<Evaluation[]>("GET", `/v1/job/${enc(id)}/evaluations`));
  }

  // Evaluations

  /** Newest first; `prefix` narrows to IDs starting with it, `job` and `status` to those values. */
  async listEvaluations(
    opts: { prefix?: string; job?: string; status?: string } = {},
  ): Promise<Evaluation[]> {
    const query = {
      prefix: opts.prefix || undefined,
      job: opts.job || undefined,
      status: opts.status || undefined,
    };
    return newestFirst(await this.request<Evaluation[]>("GET", "/v1/evaluations", { query }));
  }
  getEvaluation(id: string): Promise<Evaluation> {
    return this.request("GET", `/v1/evaluation/${enc(id)}`);
  }
  /** Nomad's `GET /v1/deployment/:id`. */
  getDeployment(id: string): Promise<Deployment> {
    return this.request("GET", `/v1/deployment/${enc(id)}`);
  }
  /** The allocations the evaluation placed. */
  evaluationAllocations(id: string): Promise<AllocationListStub[]> {
    return this.request("GET", `/v1/evaluation/${enc(id)}/allocations`);
  }

  // Allocations

  /** `prefix` narrows to IDs starting with it (Nomad's `?prefix=`). */
  listAllocations(opts: ListOptions = {}): Promise<AllocationListStub[]> {
    return this.request("GET", "/v1/allocations", { query: listQuery(opts) });
  }
  getAllocation(id: string): Promise<Allocation> {
    return this.request("GET", `/v1/allocation/${enc(id)}`);
  }
  /** Stops the alloc and lets the scheduler replace it (Nomad's AllocStopResponse). */
  stopAllocation(id: string): Promise<{ EvalID: string; Index: number }> {
    return this.request("PUT", `/v1/allocation/${enc(id)}/stop`);
  }
  /** What the alloc's running tasks use now, measured on its node. */
  allocationStats(id: string): Promise<AllocResourceUsage> {
    return this.request("GET", `/v1/client/allocation/${enc(id)}/stats`);
  }
  /** `task` "" signals every running task. */
  async signalAllocation(id: string, task: string, signal: string): Promise<void> {
    await this.request("PUT", `/v1/client/allocation/${enc(id)}/signal`, {
      body: { Task: task, Signal: signal },
    });
  }
  async restartAllocation(id: string, task: string, allTasks: boolean): Promise<void> {
    await this.request("PUT", `/v1/client/allocation/${enc(id)}/restart`, {
      body: { TaskName: task, AllTasks: allTasks },
    });
  }

  // Nodes

  /** `prefix` narrows to IDs starting with it (Nomad's `?prefix=`). */
  listNodes(opts: ListOptions = {}): Promise<NodeListStub[]> {
    return this.request("GET", "/v1/nodes", { query: listQuery(opts) });
  }
  getNode(id: string): Promise<Node> {
    return this.request("GET", `/v1/node/${enc(id)}`);
  }
  /** Every alloc on the node, terminal ones included. */
  nodeAllocations(id: string): Promise<Allocation[]> {
    return this.request("GET", `/v1/node/${enc(id)}/allocations`);
  }
  /** Starts or updates a drain with `spec`; null cancels it (`markEligible` then re-enables scheduling). */
  updateNodeDrain(
    id: string,
    spec: DrainSpec | null,
    opts: { markEligible?: boolean; meta?: Record<string, string> } = {},
  ): Promise<NodeUpdateResponse> {
    return this.request("POST", `/v1/node/${enc(id)}/drain`, {
      body: { DrainSpec: spec, MarkEligible: opts.markEligible ?? false, Meta: opts.meta ?? null },
    });
  }
  updateNodeEligibility(id: string, eligible: boolean): Promise<NodeUpdateResponse> {
    return this.request("POST", `/v1/node/${enc(id)}/eligibility`, {
      body: { Eligibility: eligible ? "eligible" : "ineligible" },
    });
  }

  /** A node introduction token (Nomad's ACLIdentity().CreateClientIntroductionToken); TTL in ns, 0: the server's default. */
  createNodeIntroToken(req: { NodeName: string; NodePool: string; TTL: number }): Promise<{ JWT: string }> {
    return this.request("PUT", "/v1/acl/identity/client-introduction-token", { body: req });
  }

  // Namespaces (the name is a path segment; the client's own `?namespace=` plays no part)

  /** By name; `prefix` keeps those whose name starts with it. */
  listNamespaces(opts: { prefix?: string } = {}): Promise<Namespace[]> {
    return this.request("GET", "/v1/namespaces", { query: { prefix: opts.prefix || undefined } });
  }
  getNamespace(name: string): Promise<Namespace> {
    return this.request("GET", `/v1/namespace/${enc(name)}`);
  }
  /** Creates or updates the namespace (Nomad's `PUT /v1/namespace`). */
  async applyNamespace(ns: NamespaceSpec): Promise<void> {
    await this.request("PUT", "/v1/namespace", { body: ns });
  }
  async deleteNamespace(name: string): Promise<void> {
    await this.request("DELETE", `/v1/namespace/${enc(name)}`);
  }

  // CSI volumes

  /** `nodeId` / `pluginId`: volumes claimed on that node / of that plugin (Nomad's node_id, plugin_id). */
  listVolumes(opts: ListOptions & { nodeId?: string; pluginId?: string } = {}): Promise<CSIVolumeListStub[]> {
    const { nodeId, pluginId, ...list } = opts;
    return this.request("GET", "/v1/volumes", {
      query: {
        type: "csi",
        node_id: nodeId || undefined,
        plugin_id: pluginId || undefined,
        ...listQuery(list),
      },
    });
  }
  /**
   * The volume with berth's claim records (`?claims=true`) and its measured usage and health
   * (`?usage=true`), which `volume status` shows.
   */
  getVolume(id: string): Promise<CSIVolumeWithClaims & CSIVolumeUsageField> {
    return this.request("GET", `/v1/volume/csi/${enc(id)}`, { query: { claims: "true", usage: "true" } });
  }
  /**
   * Registers existing storage (the spec names its `ExternalID`). A spec without an ID is still
   * sent, so the server's validation error reaches the user.
   */
  async registerVolume(vol: CSIVolumeSpec): Promise<void> {
    await this.request("PUT", `/v1/volume/csi/${enc(vol.ID ?? "")}`, { body: { Volumes: [vol] } });
  }
  /** Answers the warnings of a forced deregister (attachments that may be left behind), or []. */
  async deregisterVolume(id: string, opts: { force?: boolean } = {}): Promise<string[]> {
    const res = await this.request<{ Warnings?: string[] } | undefined>(
      "DELETE",
      `/v1/volume/csi/${enc(id)}`,
      {
        query: { force: String(opts.force ?? false) },
      },
    );
    return res?.Warnings ?? [];
  }
  /** Creates the volume through its controller plugin; answers with the created volumes. */
  async createVolume(vol: CSIVolumeSpec): Promise<CSIVolume[]> {
    const path = `/v1/volume/csi/${enc(vol.ID ?? "")}/create`;
    const res = await this.request<{ Volumes: CSIVolume[] | null } | undefined>("PUT", path, {
      body: { Volumes: [vol] },
    });
    return res?.Volumes ?? [];
  }
  /** Deletes the storage through the controller plugin; `secrets` travel in a header, never a URL. */
  async deleteVolume(id: string, opts: { secrets?: Record<string, string> } = {}): Promise<void> {
    await this.request("DELETE", `/v1/volume/csi/${enc(id)}/delete`, {
      headers: secretsHeader(opts.secrets),
    });
  }

  /** Releases the claims allocs on `nodeId` hold on the volume (they must have stopped). */
  async detachVolume(id: string, nodeId: string): Promise<void> {
    await this.request("DELETE", `/v1/volume/csi/${enc(id)}/detach`, { query: { node: nodeId } });
  }
  /** The plugin's own volume list (ListVolumes). */
  listExternalVolumes(
    pluginId: string,
    opts: { perPage?: number; nextToken?: string } = {},
  ): Promise<CSIVolumeExternalListResponse> {
    return this.request("GET", "/v1/volumes/external", { query: { plugin_id: pluginId, ...paging(opts) } });
  }

  /** Interrupted creates whose storage no berth volume records (berth's addition). */
  async listVolumeOrphans(opts: { pluginId?: string } = {}): Promise<CSIVolumeOrphan[]> {
    return (
      (await this.request<CSIVolumeOrphan[] | null>("GET", "/v1/volumes/orphans", {
        query: { type: "csi", plugin_id: opts.pluginId || undefined },
      })) ?? []
    );
  }
  /** Completes an interrupted create: its storage is recorded as volume `id`. */
  async adoptVolumeOrphan(id: string): Promise<CSIVolume[]> {
    const res = await this.request<{ Volumes: CSIVolume[] | null } | undefined>(
      "PUT",
      `/v1/volume/csi/${enc(id)}/adopt`,
    );
    return res?.Volumes ?? [];
  }
  /** Deletes the storage of an interrupted create through the plugin; `secrets` travel in a header. */
  async deleteVolumeOrphan(id: string, opts: { secrets?: Record<string, string> } = {}): Promise<void> {
    await this.request("DELETE", `/v1/volume/csi/${enc(id)}/orphan`, {
      headers: secretsHeader(opts.secrets),
    });
  }

  // CSI snapshots

  /** Snapshots the volume; `name` may be empty (the server then names it). */
  async createSnapshot(
    volumeId: string,
    name: string,
    opts: { secrets?: Record<string, string>; parameters?: Record<string, string> } = {},
  ): Promise<CSISnapshot[]> {
    const res = await this.request<{ Snapshots: CSISnapshot[] | null } | undefined>(
      "PUT",
      "/v1/volumes/snapshot",
      {
        body: {
          Snapshots: [
            {
              SourceVolumeID: volumeId,
              Name: name,
              Secrets: opts.secrets ?? {},
              Parameters: opts.parameters ?? {},
            },
          ],
        },
      },
    );
    return res?.Snapshots ?? [];
  }
  async deleteSnapshot(
    pluginId: string,
    snapshotId: string,
    opts: { secrets?: Record<string, string> } = {},
  ): Promise<void> {
    await this.request("DELETE", "/v1/volumes/snapshot", {
      query: { plugin_id: pluginId, snapshot_id: snapshotId },
      headers: secretsHeader(opts.secrets),
    });
  }
  listSnapshots(
    pluginId: string,
    opts: { perPage?: number; nextToken?: string; secrets?: Record<string, string> } = {},
  ): Promise<CSISnapshotListResponse> {
    return this.request("GET", "/v1/volumes/snapshot", {
      query: { plugin_id: pluginId, ...paging(opts) },
      headers: secretsHeader(opts.secrets),
    });
  }

  // CSI plugins

  listPlugins(opts: ListOptions = {}): Promise<CSIPluginListStub[]> {
    return this.request("GET", "/v1/plugins", { query: { type: "csi", ...listQuery(opts) } });
  }
  getPlugin(id: string): Promise<CSIPlugin> {
    return this.request("GET", `/v1/plugin/csi/${enc(id)}`);
  }

  // Operator: stored records the server could not load

  listQuarantine(): Promise<QuarantinedRecord[]> {
    return this.request("GET", "/v1/operator/quarantine");
  }
  /**
   * Drops one entry for good. `namespace` matters for jobs and volumes only; the client's own
   * namespace, when it has one, wins (as for every call).
   */
  async deleteQuarantined(table: string, key: string, namespace?: string): Promise<void> {
    const ns = namespace ? `?namespace=${enc(namespace)}` : "";
    await this.request("DELETE", `/v1/operator/quarantine/${enc(table)}/${enc(key)}${ns}`);
  }

  // Deployments

  /** Promotes every group's canaries, or only `groups`'. */
  promoteDeployment(id: string, groups?: string[]): Promise<DeploymentUpdateResponse> {
    const body = groups ? { DeploymentID: id, Groups: groups } : { DeploymentID: id, All: true };
    return this.request("PUT", `/v1/deployment/promote/${enc(id)}`, { body });
  }
  failDeployment(id: string): Promise<DeploymentUpdateResponse> {
    return this.request("PUT", `/v1/deployment/fail/${enc(id)}`, { body: { DeploymentID: id } });
  }
}
