/**
 * The ACL routes of the API client (Nomad's api/acl.go): policies and tokens. ApiClient extends
 * this class, so `api.listAclPolicies()` sits beside the other routes' methods.
 */
import { ApiClientBase, enc } from "./client_base.js";
import type { ACLPolicy, ACLPolicyListStub, ACLToken, ACLTokenListStub, ACLTokenRequest } from "./types.js";

export class AclApiClient extends ApiClientBase {
  /** The one-time bootstrap: a management token, its SecretID shown this once. */
  aclBootstrap(bootstrapSecret?: string): Promise<ACLToken> {
    return this.request("PUT", "/v1/acl/bootstrap", {
      body: bootstrapSecret ? { BootstrapSecret: bootstrapSecret } : {},
    });
  }
  listAclPolicies(): Promise<ACLPolicyListStub[]> {
    return this.request("GET", "/v1/acl/policies");
  }
  getAclPolicy(name: string): Promise<ACLPolicy> {
    return this.request("GET", `/v1/acl/policy/${enc(name)}`);
  }
  async upsertAclPolicy(policy: { Name: string; Description: string; Rules: string }): Promise<void> {
    await this.request("PUT", `/v1/acl/policy/${enc(policy.Name)}`, { body: policy });
  }
  async deleteAclPolicy(name: string): Promise<void> {
    await this.request("DELETE", `/v1/acl/policy/${enc(name)}`);
  }
  listAclTokens(): Promise<ACLTokenListStub[]> {
    return this.request("GET", "/v1/acl/tokens");
  }
  createAclToken(token: ACLTokenRequest): Promise<ACLToken> {
    return this.request("PUT", "/v1/acl/token", { body: token });
  }
  updateAclToken(token: ACLTokenRequest & { AccessorID: string }): Promise<ACLToken> {
    return this.request("PUT", `/v1/acl/token/${enc(token.AccessorID)}`, { body: token });
  }
  getAclToken(accessorId: string): Promise<ACLToken> {
    return this.request("GET", `/v1/acl/token/${enc(accessorId)}`);
  }
  aclTokenSelf(): Promise<ACLToken> {
    return this.request("GET", "/v1/acl/token/self");
  }
  async deleteAclToken(accessorId: string): Promise<void> {
    await this.request("DELETE", `/v1/acl/token/${enc(accessorId)}`);
  }
}
