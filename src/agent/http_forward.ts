/**
 * The client-only agent's reverse proxy (agent/client_http.ts): a request it does not answer itself
 * goes to a server as it came — method, path and query, headers (the caller's ACL token too), body
 * streamed — and the server's answer comes back as it is sent: status, headers, body streamed (a
 * blocking query, a followed log and an event stream pass through as they flow). Hop-by-hop
 * headers (RFC 9110 §7.6.1) are dropped both ways; `X-Forwarded-For` names the caller.
 *
 * TLS to the server is the node agent's own (agent config `tls`: the CA the server's certificate
 * must chain to, the agent's certificate when it has one, `server.<region>.nomad` with
 * verify_server_hostname), so a server with verify_https_client accepts the forwarded request.
 * No server reachable → 503 ERR_RPC_UNAVAILABLE before anything was sent; a failure after the
 * answer began cuts it short. WebSocket upgrades (exec) are not forwarded.
 */
import http from "node:http";
import https from "node:https";
import tls from "node:tls";
import type { ClientTls } from "../internal/tls.js";
import { BerthError } from "../structs/errors.js";
import { sendError } from "../server/wire/http_io.js";

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** `headers` without the hop-by-hop ones (and those the Connection header names). */
export function endToEndHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ""),
  );
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || named.has(k)) continue;
    out[k] = v;
  }
  return out;
}

/** node:https options for a request to a server, from the node agent's dial TLS. */
export function serverTlsOptions(t: ClientTls | undefined): https.RequestOptions {
  if (!t) return {};
  const expected = t.serverName;
  return {
    ca: t.ca,
    cert: t.cert && t.key ? t.cert : undefined,
    key: t.cert && t.key ? t.key : undefined,
    minVersion: t.minVersion,
    rejectUnauthorized: true,
    servername: expected,
    // The chain alone unless verify_server_hostname names the server (as the agent RPC dials).
    checkServerIdentity: (_host, cert) => (expected ? tls.checkServerIdentity(expected, cert) : undefined),
  };
}

/** Sends `req` to `server` (http(s)://HOST:PORT) and streams the answer into `res`. */
export function forwardRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  server: string,
  dialTls: ClientTls | undefined,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const target = new URL(req.url ?? "/", server);
    const headers = endToEndHeaders(req.headers);
    headers.host = target.host;
    const from = req.socket.remoteAddress;
    if (from) {
      const prior = req.headers["x-forwarded-for"];
      headers["x-forwarded-for"] = prior ? `${String(prior)}, ${from}` : from;
    }
    const secure = target.protocol === "https:";
    const upstream = (secure ? https : http).request(target, {
      method: req.method,
      headers,
      ...(secure ? serverTlsOptions(dialTls) : {}),
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve();
    };
    // The caller went away: the server's request goes too (a blocking query, a follow).
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
      finish();
    });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEndHeaders(answer.headers));
      answer.pipe(res);
      answer.on("error", () => res.destroy());
      answer.on("aborted", () => res.destroy());
    });
    upstream.on("error", (err) => {
      if (!res.headersSent) {
        sendError(
          res,
          new BerthError("ERR_RPC_UNAVAILABLE", `no server answered at ${server}: ${err.message}`, {
            cause: err,
          }),
        );
      } else res.destroy();
      finish();
    });
    req.pipe(upstream);
  });
}
