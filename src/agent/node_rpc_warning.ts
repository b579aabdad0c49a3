/**
 * The one warning a server logs at start when its node RPC (`/v1/agent/rpc`) is not under mutual
 * TLS outside -dev (issue 30: "a fake node can get volume secrets without TLS"). Without
 * `tls { rpc = true }` a node proves only that it is the node it first registered as (its node
 * secret, trust on first use, as Nomad without mTLS): any host that reaches the port can register
 * a new node ID, report a controller plugin and be sent controller calls with the volumes' secrets,
 * and, without `tls { http = true }`, those secrets cross the network in clear text. -dev listens
 * on loopback only and is exempt. Pure: the agent logs what it answers.
 */
import type { IntroEnforcement } from "../server/rpc/node_intro.js";

export interface NodeRpcExposure {
  dev: boolean;
  /** `tls { http }` on the listener. */
  https: boolean;
  /** `tls { rpc }`: the RPC path takes only CA-signed node certificates. */
  mtls: boolean;
  /** `client_introduction { enforcement }`. */
  enforcement: IntroEnforcement;
}

/** The warning's message and fields, or undefined when node RPC is under mTLS or in -dev. */
export function nodeRpcWarning(
  e: NodeRpcExposure,
): { message: string; fields: Record<string, unknown> } | undefined {
  if (e.dev || e.mtls) return undefined;
  const clear = e.https ? "" : " Without tls { http = true } they also cross the network in clear text.";
  const intro =
    e.enforcement === "strict"
      ? ' client_introduction enforcement is "strict", so a new node ID needs an introduction token, but a token is no certificate.'
      : ' Short of mTLS, server { client_introduction { enforcement = "strict" } } with `berth node intro create` refuses node IDs never seen before that bring no introduction token.';
  return {
    message:
      "node RPC is not under mutual TLS: any host that can reach this server can register a new node (trust on first use), " +
      "report a controller plugin and be sent controller calls with the volumes' secrets." +
      clear +
      " Turn mTLS on with `berth tls ca create` and `berth tls cert create -server` / `-client`, then " +
      "tls { http = true, rpc = true, ca_file, cert_file, key_file, verify_server_hostname = true } on every server and node agent (README, Security: TLS)." +
      intro,
    fields: { tls_http: e.https, tls_rpc: e.mtls, client_introduction: e.enforcement },
  };
}
