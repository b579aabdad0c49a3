/**
 * The agent config's `tls` block, with Nomad's names and defaults (every switch false):
 *
 *   tls {
 *     http = true                     # the server's listener speaks HTTPS
 *     rpc  = true                     # node agents dial wss:// with their certificate; the server
 *                                     # takes on /v1/agent/rpc only peers the CA signed
 *     ca_file   = "nomad-agent-ca.pem"
 *     cert_file = "global-server-nomad.pem"
 *     key_file  = "global-server-nomad-key.pem"
 *     verify_server_hostname = true   # node agents check the server is server.global.nomad; the
 *                                     # server takes only client./server.global.nomad on the RPC path
 *     verify_https_client    = true   # every HTTPS client needs a CA-signed certificate (handshake)
 *     tls_min_version = "tls12"       # or "tls13"
 *   }
 *
 * Nomad serves HTTP and RPC on two ports; berth serves both on one listener, so on a server
 * `rpc = true` needs `http = true` (there is no plaintext listener left for the API). Settings berth
 * does not honour are refused by name when set: `rpc_upgrade_mode = true` (no plaintext fallback
 * exists), `tls_cipher_suites` (Node's OpenSSL defaults are used), and `tls10`/`tls11`.
 */
import type { Body } from "../api/specs/body.js";
import { BerthError } from "../structs/errors.js";
import {
  loadTlsMaterial,
  serverCertName,
  type ClientTls,
  type ServerTls,
  type TlsMinVersion,
} from "../internal/tls.js";

export interface TlsSetting {
  http?: boolean;
  rpc?: boolean;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  verifyServerHostname?: boolean;
  verifyHttpsClient?: boolean;
  minVersion?: TlsMinVersion;
}

const MIN_VERSIONS: Record<string, TlsMinVersion> = { tls12: "TLSv1.2", tls13: "TLSv1.3" };

export function parseTls(b: Body): TlsSetting {
  const out: TlsSetting = {};
  const bools = [
    ["http", "http"],
    ["rpc", "rpc"],
    ["verify_server_hostname", "verifyServerHostname"],
    ["verify_https_client", "verifyHttpsClient"],
  ] as const;
  for (const [key, field] of bools) {
    const v = b.bool(key);
    if (v !== undefined) out[field] = v;
  }
  const files = [
    ["ca_file", "caFile"],
    ["cert_file", "certFile"],
    ["key_file", "keyFile"],
  ] as const;
  for (const [key, field] of files) {
    const v = b.string(key);
    if (v !== undefined) out[field] = v;
  }
  const min = b.string("tls_min_version");
  if (min !== undefined && min !== "") {
    const v = MIN_VERSIONS[min];
    if (!v) {
      throw b.error(
        `tls_min_version must be "tls12" or "tls13", got ${JSON.stringify(min)} (berth does not offer TLS 1.0 or 1.1)`,
      );
    }
    out.minVersion = v;
  }
  // Their defaults (false, "") are accepted: a Nomad config that spells them out still loads.
  if (b.bool("rpc_upgrade_mode")) {
    throw b.error(
      "rpc_upgrade_mode is not supported: berth's listener has no plaintext fallback to upgrade from",
    );
  }
  if (b.string("tls_cipher_suites")) {
    throw b.error("tls_cipher_suites is not supported: berth uses Node's default TLS 1.2/1.3 cipher suites");
  }
  b.finish();
  return out;
}

/** A field the role needs is missing: one error naming it and why. */
function need(value: string | undefined, key: string, why: string): void {
  if (!value) throw new BerthError("ERR_VALIDATION", `tls: ${key} is required ${why}`);
}

/**
 * The server's listener settings, or undefined when `http` is off (plain HTTP, as in -dev). The PEM
 * files are read and checked here, so a bad one stops the agent before it listens.
 */
export function serverTls(s: TlsSetting | undefined): ServerTls | undefined {
  if (!s) return undefined;
  if (s.rpc && !s.http) {
    throw new BerthError(
      "ERR_VALIDATION",
      "tls: rpc = true on a server needs http = true: berth serves the HTTP API and the agent RPC on one listener",
    );
  }
  if (!s.http) return undefined;
  need(s.certFile, "cert_file", "with http = true");
  need(s.keyFile, "key_file", "with http = true");
  if (s.verifyHttpsClient) need(s.caFile, "ca_file", "with verify_https_client = true");
  if (s.rpc) need(s.caFile, "ca_file", "with rpc = true");
  const m = loadTlsMaterial(s, "tls");
  return {
    material: { ca: m.ca, cert: m.cert!, key: m.key! },
    verifyHttpsClient: s.verifyHttpsClient ?? false,
    rpc: s.rpc ?? false,
    verifyServerHostname: s.verifyServerHostname ?? false,
    minVersion: s.minVersion ?? "TLSv1.2",
  };
}

/**
 * How a node agent dials its servers, or undefined for plain ws://. It checks the server's
 * certificate against ca_file (the system's CAs without one; `rpc` requires one), and its name
 * with verify_server_hostname; it presents its own certificate when cert_file is set (`rpc`
 * requires one).
 */
export function clientTls(s: TlsSetting | undefined): ClientTls | undefined {
  if (!s || (!s.rpc && !s.http)) return undefined;
  if (s.rpc) {
    need(s.caFile, "ca_file", "with rpc = true");
    need(s.certFile, "cert_file", "with rpc = true");
    need(s.keyFile, "key_file", "with rpc = true");
  }
  const m = loadTlsMaterial(s, "tls");
  return {
    ca: m.ca,
    // Presented whenever set: with only `http`, a server with verify_https_client still asks for it.
    ...(m.cert && m.key ? { cert: m.cert, key: m.key } : {}),
    serverName: s.verifyServerHostname ? serverCertName() : undefined,
    minVersion: s.minVersion ?? "TLSv1.2",
  };
}

/**
 * A server address as a node agent dials it: with `rpc` or `http` on, always over TLS (an
 * `http://` address, which is what a bare -servers=HOST:PORT becomes, is dialled as `https://`):
 * the cluster's servers then speak TLS only.
 */
export function dialAddress(addr: string, s: TlsSetting | undefined): string {
  return s?.rpc || s?.http ? addr.replace(/^http:\/\//i, "https://") : addr;
}
