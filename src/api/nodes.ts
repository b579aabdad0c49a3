/** The node routes of the API client (Nomad's api/nodes.go, `Nodes()`). */
import { enc, listQuery, type ApiTransport, type ListOptions } from "./transport.js";
import type { Allocation, DrainSpec, Node, NodeListStub, NodeUpdateResponse } from "./types.js";

export class NodesApi {
  constructor(private readonly t: ApiTransport) {}

  /** `prefix` narrows to IDs starting with it (Nomad's `?prefix=`). */
  list(opts: ListOptions = {}): Promise<NodeListStub[]> {
    return this.t.request("GET", "/v1/nodes", { query: listQuery(opts) });
  }
  info(id: string): Promise<Node> {
    return this.t.request("GET", `/v1/node/${enc(id)}`);
  }
  /** Every alloc on the node, terminal ones included. */
  allocations(id: string): Promise<Allocation[]> {
    return this.t.request("GET", `/v1/node/${enc(id)}/allocations`);
  }
  /** Starts or updates a drain with `spec`; null cancels it (`markEligible` then re-enables scheduling). */
  updateDrain(
    id: string,
    spec: DrainSpec | null,
    opts: { markEligible?: boolean; meta?: Record<string, string> } = {},
  ): Promise<NodeUpdateResponse> {
    return this.t.request("POST", `/v1/node/${enc(id)}/drain`, {
      body: { DrainSpec: spec, MarkEligible: opts.markEligible ?? false, Meta: opts.meta ?? null },
    });
  }
  toggleEligibility(id: string, eligible: boolean): Promise<NodeUpdateResponse> {
    return this.t.request("POST", `/v1/node/${enc(id)}/eligibility`, {
      body: { Eligibility: eligible ? "eligible" : "ineligible" },
    });
  }
}
