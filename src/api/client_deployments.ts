/**
 * The deployment and job-rollout routes of the API client (Nomad's api/deployments.go and the
 * revert/scale calls of api/jobs.go). ApiClient extends this class, so `api.listDeployments()`
 * sits beside the other routes' methods.
 */
import { enc } from "./client_base.js";
import { StatusApiClient } from "./client_status.js";
import type {
  AllocationListStub,
  Deployment,
  DeploymentUpdateResponse,
  JobRegisterResponse,
  JobScaleStatus,
} from "./types.js";

export class DeploymentApiClient extends StatusApiClient {
  /** Every deployment (`prefix` narrows to IDs starting with it), as Nomad's `GET /v1/deployments`. */
  listDeployments(opts: { prefix?: string } = {}): Promise<Deployment[]> {
    return this.request("GET", "/v1/deployments", { query: { prefix: opts.prefix || undefined } });
  }
  /** The job's deployments, newest first. */
  jobDeployments(jobId: string): Promise<Deployment[]> {
    return this.request("GET", `/v1/job/${enc(jobId)}/deployments`);
  }
  /** The job's latest deployment, null when it has none. */
  jobLatestDeployment(jobId: string): Promise<Deployment | null> {
    return this.request("GET", `/v1/job/${enc(jobId)}/deployment`);
  }
  deploymentAllocations(id: string): Promise<AllocationListStub[]> {
    return this.request("GET", `/v1/deployment/allocations/${enc(id)}`);
  }
  /** `pause` true pauses the deployment, false resumes it (Nomad's `/v1/deployment/pause/:id`). */
  pauseDeployment(id: string, pause: boolean): Promise<DeploymentUpdateResponse> {
    return this.request("PUT", `/v1/deployment/pause/${enc(id)}`, {
      body: { DeploymentID: id, Pause: pause },
    });
  }
  /** Registers kept version `version` of the job again (Nomad's `/v1/job/:id/revert`). */
  revertJob(jobId: string, version: number, enforcePriorVersion?: number): Promise<JobRegisterResponse> {
    const body: Record<string, unknown> = { JobID: jobId, JobVersion: version };
    if (enforcePriorVersion !== undefined) body.EnforcePriorVersion = enforcePriorVersion;
    return this.request("PUT", `/v1/job/${enc(jobId)}/revert`, { body });
  }
  /** Sets the group's count (Nomad's `PUT /v1/job/:id/scale`). */
  scaleJob(jobId: string, group: string, count: number, message: string): Promise<JobRegisterResponse> {
    return this.request("PUT", `/v1/job/${enc(jobId)}/scale`, {
      body: { Count: count, Target: { Job: jobId, Group: group }, Message: message },
    });
  }
  jobScaleStatus(jobId: string): Promise<JobScaleStatus> {
    return this.request("GET", `/v1/job/${enc(jobId)}/scale`);
  }
}
