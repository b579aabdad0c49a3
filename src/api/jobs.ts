/**
 * The job routes of the API client (Nomad's api/jobs.go, `Jobs()`): `api.jobs.list()`,
 * `api.jobs.register(job)`, ... including the rollout calls Nomad keeps on Jobs (revert, scale)
 * and the job's own allocations, evaluations and deployments.
 */
import { enc, listQuery, newestFirst, type ApiTransport, type ListOptions } from "./transport.js";
import type {
  AllocationListStub,
  Deployment,
  Evaluation,
  Job,
  JobDeregisterResponse,
  JobDispatchResponse,
  JobListStub,
  JobPlanResponse,
  JobRegisterResponse,
  JobScaleStatus,
  JobValidateResponse,
  JobVersionsResponse,
  PeriodicForceResponse,
} from "./types.js";

export class JobsApi {
  constructor(private readonly t: ApiTransport) {}

  list(opts: ListOptions = {}): Promise<JobListStub[]> {
    return this.t.request("GET", "/v1/jobs", { query: listQuery(opts) });
  }
  /** `checkIndex` (`job run -check-index`): register only if the job's JobModifyIndex is that. */
  register(job: Job, opts: { checkIndex?: number } = {}): Promise<JobRegisterResponse> {
    const enforce =
      opts.checkIndex === undefined ? {} : { EnforceIndex: true, JobModifyIndex: opts.checkIndex };
    return this.t.request("PUT", "/v1/jobs", { body: { Job: job, ...enforce } });
  }
  /** The scheduler's dry run of the job, changing nothing (Nomad's `PUT /v1/job/:id/plan`). */
  plan(job: Job, opts: { diff?: boolean } = {}): Promise<JobPlanResponse> {
    return this.t.request("PUT", `/v1/job/${enc(job.ID)}/plan`, {
      body: { Job: job, Diff: opts.diff ?? true },
    });
  }
  /** The job's kept versions, newest first (Nomad's `GET /v1/job/:id/versions`). */
  versions(id: string, opts: { diffs?: boolean } = {}): Promise<JobVersionsResponse> {
    return this.t.request("GET", `/v1/job/${enc(id)}/versions`, {
      query: { diffs: opts.diffs ? "true" : undefined },
    });
  }
  /**
   * The server's reading of an HCL jobspec (Nomad's `Jobs().ParseHCLOpts`, `PUT /v1/jobs/parse`);
   * `canonicalize`: with the server's defaults filled in.
   */
  parseHcl(jobHcl: string, opts: { variables?: string; canonicalize?: boolean } = {}): Promise<Job> {
    return this.t.request("PUT", "/v1/jobs/parse", {
      body: { JobHCL: jobHcl, Variables: opts.variables ?? "", Canonicalize: opts.canonicalize ?? false },
    });
  }
  /** The server's validation of a job, registering nothing (Nomad's `PUT /v1/validate/job`). */
  validate(job: Job): Promise<JobValidateResponse> {
    return this.t.request("PUT", "/v1/validate/job", { body: { Job: job } });
  }
  info(id: string): Promise<Job> {
    return this.t.request("GET", `/v1/job/${enc(id)}`);
  }
  deregister(id: string, opts: { purge?: boolean } = {}): Promise<JobDeregisterResponse> {
    return this.t.request("DELETE", `/v1/job/${enc(id)}`, { query: { purge: String(opts.purge ?? false) } });
  }
  /** Nomad's `job dispatch`: a child of the parameterized job with `meta` and `payload` (bytes). */
  dispatch(
    id: string,
    opts: { meta?: Record<string, string>; payload?: Uint8Array; idempotencyToken?: string } = {},
  ): Promise<JobDispatchResponse> {
    const body: Record<string, unknown> = { JobID: id, Meta: opts.meta ?? {} };
    if (opts.payload && opts.payload.length > 0) body.Payload = Buffer.from(opts.payload).toString("base64");
    if (opts.idempotencyToken) body.IdempotencyToken = opts.idempotencyToken;
    return this.t.request("PUT", `/v1/job/${enc(id)}/dispatch`, { body });
  }
  /** Nomad's `job periodic force`: launches the periodic job's child now. */
  periodicForce(id: string): Promise<PeriodicForceResponse> {
    return this.t.request("PUT", `/v1/job/${enc(id)}/periodic/force`);
  }
  allocations(id: string): Promise<AllocationListStub[]> {
    return this.t.request("GET", `/v1/job/${enc(id)}/allocations`);
  }
  /** The job's evaluations, newest first (as Nomad's client sorts them). */
  async evaluations(id: string): Promise<Evaluation[]> {
    return newestFirst(await this.t.request<Evaluation[]>("GET", `/v1/job/${enc(id)}/evaluations`));
  }
  /** The job's deployments, newest first. */
  deployments(id: string): Promise<Deployment[]> {
    return this.t.request("GET", `/v1/job/${enc(id)}/deployments`);
  }
  /** The job's latest deployment, null when it has none. */
  latestDeployment(id: string): Promise<Deployment | null> {
    return this.t.request("GET", `/v1/job/${enc(id)}/deployment`);
  }
  /** Registers kept version `version` of the job again (Nomad's `/v1/job/:id/revert`). */
  revert(id: string, version: number, enforcePriorVersion?: number): Promise<JobRegisterResponse> {
    const body: Record<string, unknown> = { JobID: id, JobVersion: version };
    if (enforcePriorVersion !== undefined) body.EnforcePriorVersion = enforcePriorVersion;
    return this.t.request("PUT", `/v1/job/${enc(id)}/revert`, { body });
  }
  /** Sets the group's count (Nomad's `PUT /v1/job/:id/scale`). */
  scale(id: string, group: string, count: number, message: string): Promise<JobRegisterResponse> {
    return this.t.request("PUT", `/v1/job/${enc(id)}/scale`, {
      body: { Count: count, Target: { Job: id, Group: group }, Message: message },
    });
  }
  scaleStatus(id: string): Promise<JobScaleStatus> {
    return this.t.request("GET", `/v1/job/${enc(id)}/scale`);
  }
}
