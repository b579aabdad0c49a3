/**
 * The agent config's `acl` block (Nomad's names):
 *
 *   acl {
 *     enabled                  = true    # every HTTP route checks the caller's token (default false)
 *     token_min_expiration_ttl = "1m"    # the shortest ExpirationTTL a token may be created with
 *     token_max_expiration_ttl = "24h"   # the longest
 *   }
 *
 * Only settings berth honours are accepted; the rest are refused by name with the reason:
 * `token_ttl`, `policy_ttl` and `role_ttl` bound Nomad's caches of resolved tokens, policies and
 * roles, but berth reads them from its state on every request (a revoked token stops working at
 * once), so there is nothing to bound; `replication_token` serves cross-region replication, and
 * berth has one region.
 */
import type { Body } from "../api/specs/body.js";
import type { AclOptions } from "../server/acl/endpoint.js";

export interface AclSetting {
  enabled?: boolean;
  tokenMinExpirationTtlMs?: number;
  tokenMaxExpirationTtlMs?: number;
}

const REFUSED: Record<string, string> = {
  token_ttl: "berth resolves tokens from its state on every request; there is no token cache to bound",
  policy_ttl: "berth reads policies from its state on every change; there is no policy cache to bound",
  role_ttl: "berth has no ACL roles",
  replication_token: "berth has a single region; there is nothing to replicate",
};

export function parseAcl(b: Body): AclSetting {
  const out: AclSetting = {};
  const enabled = b.bool("enabled");
  if (enabled !== undefined) out.enabled = enabled;
  const min = ttl(b, "token_min_expiration_ttl");
  if (min !== undefined) out.tokenMinExpirationTtlMs = min;
  const max = ttl(b, "token_max_expiration_ttl");
  if (max !== undefined) out.tokenMaxExpirationTtlMs = max;
  if (min !== undefined && max !== undefined && min > max)
    throw b.error("token_min_expiration_ttl must not be longer than token_max_expiration_ttl");
  for (const [key, why] of Object.entries(REFUSED)) {
    if (b.has(key)) throw b.error(`${key} is not supported: ${why}`);
  }
  b.finish();
  return out;
}

function ttl(b: Body, key: string): number | undefined {
  const ns = b.duration(key);
  if (ns === undefined) return undefined;
  if (ns <= 0) throw b.error(`${key} must be a positive duration, like "1m"`);
  return Math.round(ns / 1e6);
}

/** The server's options from the merged setting. */
export function aclOptions(s: AclSetting): AclOptions {
  const tokenTtl = {
    ...(s.tokenMinExpirationTtlMs !== undefined ? { minMs: s.tokenMinExpirationTtlMs } : {}),
    ...(s.tokenMaxExpirationTtlMs !== undefined ? { maxMs: s.tokenMaxExpirationTtlMs } : {}),
  };
  return { enabled: s.enabled ?? false, tokenTtl };
}
