/**
 * The agent config's `limits` block (Nomad's names and defaults, see conn_limits.ts for what each
 * bounds):
 *
 *   limits {
 *     http_max_conns_per_client = 100   # open HTTP connections per client IP; 0 = no limit
 *     rpc_max_conns_per_client  = 100   # open agent RPC connections per client IP; 0 = no limit
 *     rpc_handshake_timeout     = "5s"  # an agent connection's first frame; "0" = no limit
 *     rpc_auth_failure_burst    = 10    # failed node authentications per client IP; 0 = no limit
 *     rpc_auth_failure_interval = "10s" # after which an IP regains one failed attempt
 *   }
 *
 * The two rpc_auth_failure_* settings are berth's (Nomad has no such limit): a token bucket per
 * client IP of refused Node.Register calls (src/server/rpc/node_auth_limit.ts).
 *
 * `https_handshake_timeout` is accepted and reported as unused (nomad_config_keys.ts): with TLS on,
 * berth bounds the handshake at Nomad's default, 5 s (server/tls_listener.ts).
 */
import type { Body } from "../api/specs/body.js";

export interface LimitsSetting {
  httpMaxConnsPerClient?: number;
  rpcMaxConnsPerClient?: number;
  rpcHandshakeTimeoutMs?: number;
  rpcAuthFailureBurst?: number;
  rpcAuthFailureIntervalMs?: number;
}

/** Connection counts past this are a typo, not a limit (a process has far fewer descriptors). */
const MAX_CONNS = 1_000_000;
/** A handshake timeout past an hour would not protect anything. */
const MAX_HANDSHAKE_MS = 3_600_000;

export function parseLimits(b: Body): LimitsSetting {
  const out: LimitsSetting = {};
  const http = connCount(b, "http_max_conns_per_client");
  if (http !== undefined) out.httpMaxConnsPerClient = http;
  const rpc = connCount(b, "rpc_max_conns_per_client");
  if (rpc !== undefined) out.rpcMaxConnsPerClient = rpc;
  const ns = b.duration("rpc_handshake_timeout");
  if (ns !== undefined) {
    const ms = ns / 1e6;
    if (ms < 0 || ms > MAX_HANDSHAKE_MS || (ms > 0 && ms < 1)) {
      throw b.error(`rpc_handshake_timeout must be "0" (no limit) or between 1ms and 1h, got ${ms} ms`);
    }
    out.rpcHandshakeTimeoutMs = Math.round(ms);
  }
  const burst = connCount(b, "rpc_auth_failure_burst");
  if (burst !== undefined) out.rpcAuthFailureBurst = burst;
  const every = b.duration("rpc_auth_failure_interval");
  if (every !== undefined) {
    const ms = every / 1e6;
    if (ms < 1 || ms > MAX_HANDSHAKE_MS) {
      throw b.error(`rpc_auth_failure_interval must be between 1ms and 1h, got ${ms} ms`);
    }
    out.rpcAuthFailureIntervalMs = Math.round(ms);
  }
  b.finish();
  return out;
}

function connCount(b: Body, key: string): number | undefined {
  const n = b.integer(key);
  if (n !== undefined && (n < 0 || n > MAX_CONNS)) {
    throw b.error(`${key} must be between 0 (no limit) and ${MAX_CONNS}, got ${n}`);
  }
  return n;
}
