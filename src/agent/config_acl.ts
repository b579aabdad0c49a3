/**
 * The agent config's `acl` block (Nomad's names):
 *
 *   acl {
 *     enabled                  = true    # every HTTP route checks the caller's token (default false)
 *     token_min_expiration_ttl = "1m"    # the shortest ExpirationTTL a token may be created with
 *     token_max_expiration_ttl = "24h"   # the longest
 *   }
 *
 * Nomad's other settings are accepted and reported as unused (nomad_config_keys.ts), with why:
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
