/** ACL policies and tokens (Nomad's api/acl.go shapes). Times are RFC 3339 strings here. */

export interface ACLPolicy {
  Name: string;
  Description: string;
  /** HCL 1 (or its JSON form): Nomad's policy language. */
  Rules: string;
  JobACL?: unknown;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface ACLPolicyListStub {
  Name: string;
  Description: string;
  JobACL?: unknown;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface ACLToken {
  AccessorID: string;
  /** Filled only in the answer that created the token (bootstrap, create); "" elsewhere. */
  SecretID: string;
  Name: string;
  /** "client" or "management". */
  Type: string;
  Policies: string[] | null;
  Roles?: unknown;
  Global: boolean;
  CreateTime: string;
  ExpirationTime?: string;
  /** A Go duration ("1h0m0s"), "" when none. */
  ExpirationTTL?: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface ACLTokenListStub {
  AccessorID: string;
  Name: string;
  Type: string;
  Policies: string[] | null;
  Roles?: unknown;
  Global: boolean;
  CreateTime: string;
  ExpirationTime?: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** What `acl token create|update` sends. */
export interface ACLTokenRequest {
  AccessorID?: string;
  Name?: string;
  Type: string;
  Policies?: string[];
  Global?: boolean;
  ExpirationTTL?: string;
}
