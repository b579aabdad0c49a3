/**
 * The server↔server channel, shared by every internal path on it (forward.ts: node calls;
 * scheduler_forward.ts: scheduler passes run on the leader): who may call, and how one server
 * posts to another.
 *
 * Only a server may call: every request carries the cluster secret (generated once, kept in etcd,
 * which only servers can read), compared in constant time; with `tls.rpc` the peer must also
 * present a certificate signed by the CA, and with verify_server_hostname one naming
 * `server.<region>.nomad`, as issue 12's agent RPC rules ask of an RPC peer. A receiver refuses
 * anything else with 403 ERR_PERMISSION_DENIED before it reads the body.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";
import https from "node:https";
import tls, { type TLSSocket } from "node:tls";
import { BerthError, ERROR_CODES, type ErrorCode } from "../../structs/errors.js";
import { peerCertNames, serverCertName, type ServerTls } from "../../internal/tls.js";
import { rpcPeerRefusal } from "../tls_listener.js";

export const CLUSTER_SECRET_HEADER = "x-berth-cluster-secret";

/** Equal secrets, in time that does not depend on where they differ (nor on their lengths). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && expected !== "";
}

/**
 * Why this request may not use the internal path, or undefined when it comes from a server of
 * this cluster. `what` names one of the path's calls in the refusal ("node call", "scheduler call").
 */
export function peerRefusal(
  req: http.IncomingMessage,
  t: ServerTls | undefined,
  secret: string,
  what: string,
): string | undefined {
  if (t?.rpc) {
    const socket = req.socket as TLSSocket;
    const why = rpcPeerRefusal(socket, t);
    if (why !== undefined) return why;
    if (t.verifyServerHostname && !peerCertNames(socket.getPeerCertificate()).includes(serverCertName())) {
      return `only a server certificate (${serverCertName()}) may forward ${what}s`;
    }
  }
  const given = req.headers[CLUSTER_SECRET_HEADER];
  if (typeof given !== "string" || !secretsEqual(given, secret)) {
    return `a forwarded ${what} needs the cluster secret`;
  }
  return undefined;
}

export interface PeerPost {
  secret: string;
  tls: ServerTls | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * POSTs `body` (JSON) to `path` on the server at `addr` (its HTTPAddr) and resolves with the parsed
 * 200 answer. Any other status rejects with a BerthError carrying the answer's X-Berth-Error-Code
 * and text; a timeout with ERR_RPC_TIMEOUT; a transport failure with the socket's own error (the
 * caller decides what an unreachable server means for its call).
 */
export function postToPeer(addr: string, path: string, body: string, o: PeerPost): Promise<unknown> {
  const url = new URL(path, addr);
  const t = o.tls;
  const secure = url.protocol === "https:";
  const options: https.RequestOptions = {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Content-Length": Buffer.byteLength(body),
      [CLUSTER_SECRET_HEADER]: o.secret,
    },
    timeout: o.timeoutMs,
    signal: o.signal,
    ...(secure && t
      ? {
          ca: t.material.ca,
          cert: t.material.cert,
          key: t.material.key,
          minVersion: t.minVersion,
          // The chain always; the name only with verify_server_hostname (servers dial by IP).
          checkServerIdentity: (_host: string, cert: tls.PeerCertificate) =>
            t.verifyServerHostname ? tls.checkServerIdentity(serverCertName(), cert) : undefined,
        }
      : {}),
  };
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode === 200) {
          try {
            resolve(JSON.parse(text));
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
          return;
        }
        reject(new BerthError(codeOf(res.headers["x-berth-error-code"]), text.trim()));
      });
    });
    req.on("timeout", () =>
      req.destroy(new BerthError("ERR_RPC_TIMEOUT", `forwarded call timed out after ${o.timeoutMs} ms`)),
    );
    req.on("error", reject);
    req.end(body);
  });
}

function codeOf(header: string | string[] | undefined): ErrorCode {
  const v = Array.isArray(header) ? header[0] : header;
  return (ERROR_CODES as readonly string[]).includes(v ?? "") ? (v as ErrorCode) : "ERR_INTERNAL";
}
