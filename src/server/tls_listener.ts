/**
 * The server's one listener with TLS on (agent config `tls`, see agent/config_tls.ts). Nomad has an
 * HTTP port and an RPC port; berth serves the HTTP API and the agent RPC (`/v1/agent/rpc`, a
 * WebSocket) on one listener, so the two switches map onto it like this:
 *
 * - `http = true`: the listener speaks HTTPS (TLS 1.2+), presenting cert_file.
 * - `verify_https_client = true`: the handshake itself refuses a client without a certificate signed
 *   by ca_file, on every path (API, exec, agent RPC), as Nomad's HTTPS listener does.
 * - `rpc = true`: the listener asks every client for a certificate; the HTTP API stays open to
 *   clients without one (Nomad's HTTPS is not mutual unless verify_https_client), but an upgrade to
 *   the agent RPC path is answered 403 unless the peer's certificate is signed by the CA — and, with
 *   `verify_server_hostname`, names `client.<region>.nomad` or `server.<region>.nomad`, the names
 *   Nomad's servers take from client agents. A node agent with a foreign CA's certificate, or none,
 *   never reaches Node.Register.
 */
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { Logger } from "../internal/log.js";
import { peerCertNames, rpcPeerCertNames, type ServerTls } from "../internal/tls.js";

export const TLS_HANDSHAKE_TIMEOUT_MS = 5_000;

/** An HTTP server, or an HTTPS one with `tls`, with the same request options and listener. */
export function createListener(
  tls: ServerTls | undefined,
  options: http.ServerOptions,
  listener: http.RequestListener,
): http.Server {
  if (!tls) return http.createServer(options, listener);
  return https.createServer(
    {
      ...options,
      cert: tls.material.cert,
      key: tls.material.key,
      ca: tls.material.ca,
      // Asked whenever something checks it; only verify_https_client makes the handshake insist.
      requestCert: tls.verifyHttpsClient || tls.rpc,
      rejectUnauthorized: tls.verifyHttpsClient,
      minVersion: tls.minVersion,
      // Nomad's default https_handshake_timeout: a peer that never finishes its handshake is dropped.
      handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
    },
    listener,
  );
}

/**
 * With `tls.rpc`, refuses an upgrade to `rpcPath` from a peer whose certificate is missing, not
 * signed by the CA, or (verify_server_hostname) not an agent's. Must be attached before the RPC
 * server's own upgrade listener, which skips a socket found destroyed.
 */
export function attachRpcCertificateGate(
  server: http.Server,
  tls: ServerTls | undefined,
  rpcPath: string,
  log: Logger,
): void {
  if (!tls?.rpc) return;
  server.prependListener("upgrade", (req: http.IncomingMessage, socket: Duplex) => {
    if (socket.destroyed || (req.url ?? "").split("?")[0] !== rpcPath) return;
    const why = rpcPeerRefusal(socket as TLSSocket, tls);
    if (why === undefined) return;
    log.warn("refused an agent RPC connection: its TLS client certificate does not qualify", {
      client: (socket as TLSSocket).remoteAddress,
      reason: why,
    });
    const body = `Permission denied: ${why}`;
    // Written and destroyed in one go, as the connection limiter refuses: the short answer leaves
    // at once and the RPC server, finding the socket destroyed, never accepts it.
    socket.end(
      "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n" +
        `X-Berth-Error-Code: ERR_PERMISSION_DENIED\r\nConnection: close\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.destroy();
  });
}

/**
 * Logs each refused TLS handshake (no or an untrusted client certificate under verify_https_client,
 * a plaintext client, a protocol mismatch): without it a refused peer would leave no trace on the
 * server. The socket is already being closed by the TLS server.
 */
export function logTlsHandshakeFailures(server: http.Server, tls: ServerTls | undefined, log: Logger): void {
  if (!tls) return;
  server.on("tlsClientError", (err: Error, socket: TLSSocket) => {
    log.warn("refused a TLS handshake", { client: socket.remoteAddress, reason: err.message });
  });
}

/** Why this peer may not use the agent RPC path, or undefined when it may. */
export function rpcPeerRefusal(socket: TLSSocket, tls: ServerTls): string | undefined {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) {
    return "the agent RPC path requires a client certificate signed by the cluster's CA (tls.rpc = true)";
  }
  if (!socket.authorized) {
    return `the client certificate is not trusted: ${String(socket.authorizationError ?? "not signed by the CA")}`;
  }
  if (tls.verifyServerHostname) {
    const names = peerCertNames(cert);
    const wanted = rpcPeerCertNames();
    if (!names.some((n) => wanted.includes(n))) {
      return `the client certificate is for ${names.join(", ") || "no name"}, not ${wanted.join(" or ")} (verify_server_hostname)`;
    }
  }
  return undefined;
}
