/** The evaluation routes of the API client (Nomad's api/evaluations.go, `Evaluations()`). */
import { enc, newestFirst, type ApiTransport } from "./transport.js";
import type { AllocationListStub, Evaluation } from "./types.js";

export class EvaluationsApi {
  constructor(private readonly t: ApiTransport) {}

  /** Newest first; `prefix` narrows to IDs starting with it, `job` and `status` to those values. */
  async list(opts: { prefix?: string; job?: string; status?: string } = {}): Promise<Evaluation[]> {
    const query = {
      prefix: opts.prefix || undefined,
      job: opts.job || undefined,
      status: opts.status || undefined,
    };
    return newestFirst(await this.t.request<Evaluation[]>("GET", "/v1/evaluations", { query }));
  }
  info(id: string): Promise<Evaluation> {
    return this.t.request("GET", `/v1/evaluation/${enc(id)}`);
  }
  /** The allocations the evaluation placed. */
  allocations(id: string): Promise<AllocationListStub[]> {
    return this.t.request("GET", `/v1/evaluation/${enc(id)}/allocations`);
  }
}
