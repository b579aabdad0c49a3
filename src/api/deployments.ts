/** The deployment routes of the API client (Nomad's api/deployments.go, `Deployments()`). */
import { enc, type ApiTransport } from "./transport.js";
import type { AllocationListStub, Deployment, DeploymentUpdateResponse } from "./types.js";

export class DeploymentsApi {
  constructor(private readonly t: ApiTransport) {}

  /** Every deployment (`prefix` narrows to IDs starting with it), as Nomad's `GET /v1/deployments`. */
  list(opts: { prefix?: string } = {}): Promise<Deployment[]> {
    return this.t.request("GET", "/v1/deployments", { query: { prefix: opts.prefix || undefined } });
  }
  /** Nomad's `GET /v1/deployment/:id`. */
  info(id: string): Promise<Deployment> {
    return this.t.request("GET", `/v1/deployment/${enc(id)}`);
  }
  allocations(id: string): Promise<AllocationListStub[]> {
    return this.t.request("GET", `/v1/deployment/allocations/${enc(id)}`);
  }
  /** `pause` true pauses the deployment, false resumes it (Nomad's `/v1/deployment/pause/:id`). */
  pause(id: string, pause: boolean): Promise<DeploymentUpdateResponse> {
    return this.t.request("PUT", `/v1/deployment/pause/${enc(id)}`, {
      body: { DeploymentID: id, Pause: pause },
    });
  }
  /** Promotes every group's canaries, or only `groups`' (Nomad's PromoteAll and PromoteGroups). */
  promote(id: string, groups?: string[]): Promise<DeploymentUpdateResponse> {
    const body = groups ? { DeploymentID: id, Groups: groups } : { DeploymentID: id, All: true };
    return this.t.request("PUT", `/v1/deployment/promote/${enc(id)}`, { body });
  }
  fail(id: string): Promise<DeploymentUpdateResponse> {
    return this.t.request("PUT", `/v1/deployment/fail/${enc(id)}`, { body: { DeploymentID: id } });
  }
}
