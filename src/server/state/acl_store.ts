/**
 * The ACL part of the state store contract (store.ts's StateReader/StateWriter extend these):
 * policies by name, tokens by accessor ID and by the SHA-256 of their secret, and the one-time
 * bootstrap mark. Table indexes: `acl_policies`, `acl_tokens` (the bootstrap moves `acl_tokens`).
 */
import type { ACLPolicy, ACLToken } from "../../structs/acl_records.js";

export interface AclStateReader {
  getAclPolicy(name: string): ACLPolicy | undefined;
  /** By name. */
  listAclPolicies(): ACLPolicy[];
  getAclToken(accessorId: string): ACLToken | undefined;
  aclTokenBySecretHash(secretHash: string): ACLToken | undefined;
  /** By CreateIndex, then accessor ID. */
  listAclTokens(): ACLToken[];
  /** The index the ACL system was bootstrapped at; 0 when it has not been. */
  aclBootstrapIndex(): number;
}

export interface AclStateWriter extends AclStateReader {
  putAclPolicy(p: ACLPolicy): ACLPolicy;
  /** Returns whether there was such a policy. */
  deleteAclPolicy(name: string): boolean;
  putAclToken(t: ACLToken): ACLToken;
  /** Returns whether there was such a token. */
  deleteAclToken(accessorId: string): boolean;
  /** Records that the bootstrap happened (at this write's index). */
  markAclBootstrapped(): void;
}
