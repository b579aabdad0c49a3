/**
 * The ACL routes of the API client (Nomad's api/acl.go: `ACLTokens()`, `ACLPolicies()` and
 * `ACLIdentity()`), one group under `/v1/acl`: `api.acl.policies()`, `api.acl.createToken(...)`.
 */
import { enc, type ApiTransport } from "./transport.js";
import type { ACLPolicy, ACLPolicyListStub, ACLToken, ACLTokenListStub, ACLTokenRequest } from "./types.js";

export class AclApi {
  constructor(private readonly t: ApiTransport) {}

  /** The one-time bootstrap: a management token, its SecretID shown this once. */
  bootstrap(bootstrapSecret?: string): Promise<ACLToken> {
    return this.t.request("PUT", "/v1/acl/bootstrap", {
      body: bootstrapSecret ? { BootstrapSecret: bootstrapSecret } : {},
    });
  }
  policies(): Promise<ACLPolicyListStub[]> {
    return this.t.request("GET", "/v1/acl/policies");
  }
  policy(name: string): Promise<ACLPolicy> {
    return this.t.request("GET", `/v1/acl/policy/${enc(name)}`);
  }
  async upsertPolicy(policy: { Name: string; Description: string; Rules: string }): Promise<void> {
    await this.t.request("PUT", `/v1/acl/policy/${enc(policy.Name)}`, { body: policy });
  }
  async deletePolicy(name: string): Promise<void> {
    await this.t.request("DELETE", `/v1/acl/policy/${enc(name)}`);
  }
  tokens(): Promise<ACLTokenListStub[]> {
    return this.t.request("GET", "/v1/acl/tokens");
  }
  createToken(token: ACLTokenRequest): Promise<ACLToken> {
    return this.t.request("PUT", "/v1/acl/token", { body: token });
  }
  updateToken(token: ACLTokenRequest & { AccessorID: string }): Promise<ACLToken> {
    return this.t.request("PUT", `/v1/acl/token/${enc(token.AccessorID)}`, { body: token });
  }
  token(accessorId: string): Promise<ACLToken> {
    return this.t.request("GET", `/v1/acl/token/${enc(accessorId)}`);
  }
  tokenSelf(): Promise<ACLToken> {
    return this.t.request("GET", "/v1/acl/token/self");
  }
  async deleteToken(accessorId: string): Promise<void> {
    await this.t.request("DELETE", `/v1/acl/token/${enc(accessorId)}`);
  }
  /**
   * A node introduction token (Nomad's ACLIdentity().CreateClientIntroductionToken); TTL in ns,
   * 0: the server's default.
   */
  createClientIntroductionToken(req: {
    NodeName: string;
    NodePool: string;
    TTL: number;
  }): Promise<{ JWT: string }> {
    return this.t.request("PUT", "/v1/acl/identity/client-introduction-token", { body: req });
  }
}
