/**
 * The one map from an error code to the HTTP status the API answers with. It is total: typed as a
 * `Record` over every `ErrorCode`, so a new code without a status does not compile, and there is no
 * default branch for a code to fall into by accident. Only the HTTP layer reads it; below HTTP the
 * code is the contract and a status means nothing.
 *
 * Nomad answers 400 for bad input, 404 for a missing object, 403 for a denied token and 500 for
 * any error it has no code for. berth keeps Nomad's statuses where
 * Nomad has one and answers more precisely where Nomad falls back to 500: 409 when the object's
 * state refuses the request (in use, claimed, already exists), 501 for an RPC the plugin does not
 * implement, 503/504 when a plugin, node or the RPC link is away or too slow (worth a retry). 500
 * is left for berth's own failures and for plugins that fail in a way the CSI spec gives no meaning.
 * The catalogue in docs/errors.md is checked against this map by a unit test.
 */
import type { ErrorCode } from "../../structs/errors.js";

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  ERR_VALIDATION: 400,
  ERR_NOT_FOUND: 404,
  ERR_CONFLICT: 409,
  ERR_PERMISSION_DENIED: 403,
  ERR_METHOD_NOT_ALLOWED: 405,
  // Nomad answers 400 "ACL support disabled".
  ERR_ACL_DISABLED: 400,
  // Nomad's answer when a client passes http_max_conns_per_client.
  ERR_TOO_MANY_CONNECTIONS: 429,
  ERR_REQUEST_TOO_LARGE: 413,
  // Nomad's answer to ?format=prometheus when prometheus_metrics is off.
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  ERR_CSI_MAX_CLAIMS: 409,
  ERR_CSI_IN_USE: 409,
  ERR_CSI_VOLUME_UNSCHEDULABLE: 409,
  ERR_CSI_PLUGIN_UNAVAILABLE: 503,
  ERR_CSI_INVALID_ARGUMENT: 400,
  ERR_CSI_NOT_FOUND: 404,
  ERR_CSI_ALREADY_EXISTS: 409,
  ERR_CSI_UNIMPLEMENTED: 501,
  ERR_CSI_FAILED_PRECONDITION: 409,
  ERR_CSI_ABORTED: 409,
  ERR_CSI_UNAVAILABLE: 503,
  ERR_CSI_DEADLINE_EXCEEDED: 504,
  ERR_CSI_RESOURCE_EXHAUSTED: 503,
  ERR_CSI_OUT_OF_RANGE: 400,
  ERR_CSI_INTERNAL: 500,
  ERR_CSI_UNKNOWN: 500,
  ERR_CSI_NOT_SUPPORTED: 400,
  ERR_CSI_NO_CAPACITY: 409,
  ERR_CSI_NOT_MOUNTED: 500,
  // The node that ran the call answered with something malformed: a bad upstream answer.
  ERR_CSI_BAD_ANSWER: 502,
  ERR_RPC_UNAVAILABLE: 503,
  ERR_RPC_TIMEOUT: 504,
  ERR_NODE_NOT_CONNECTED: 503,
  ERR_STATE_UNAVAILABLE: 503,
  // Nomad answers its ErrNoLeader with a bare 500; a leader is worth waiting for, so 503.
  ERR_NO_LEADER: 503,
  ERR_FENCED: 503,
  ERR_ABORTED: 503,
  ERR_DRIVER: 500,
  ERR_INTERNAL: 500,
};

export function statusOf(code: ErrorCode): number {
  return HTTP_STATUS[code];
}
