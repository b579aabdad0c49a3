/**
 * The browser perimeter of the HTTP listener. Apart from its own web UI (/ui), berth's real clients
 * (the berth and Nomad CLIs, Nomad's Go api package, node agents) send no `Origin` header; a browser
 * sends one on every cross-origin write and on every WebSocket. So a request that carries an Origin
 * is a web page acting through a user's browser, and with ACLs off (or a token in a cookie-less
 * header the page may have stolen) the page must not be able to drive the cluster.
 *
 * The rule, checked before any route or upgrade handler runs:
 * - No `Origin`: allowed (every non-browser client).
 * - A WebSocket upgrade (agent RPC, alloc exec) with an Origin that is not allowed: 403.
 * - A write (PUT, POST, DELETE, PATCH) with an Origin that is not allowed: 403.
 * - A write with an allowed Origin whose Content-Type is one of CORS's "simple" types
 *   (`text/plain`, `application/x-www-form-urlencoded`, `multipart/form-data`) or missing: 403.
 *   Such a request is exactly what a browser sends WITHOUT a CORS preflight (a form post or a
 *   `fetch` with a string body); berth's bodies are JSON, so a browser client that is meant to
 *   write sends `Content-Type: application/json`, which only goes out after a preflight the
 *   allowlist answered. With `Access-Control-Allow-Origin = "*"` this is what still stops a drive-by
 *   page: it can only send preflight-free requests, and those are refused.
 * - A write from the agent's own origin (its web UI) at an IP address or `localhost` is allowed
 *   (ui_origin.ts says why a DNS name is not), still only with a JSON Content-Type.
 * - Reads (GET, HEAD) are answered whatever the Origin: they change nothing, and without CORS
 *   headers granting it the page cannot read the answer.
 * - A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) from an allowed
 *   origin is answered 204 with the methods and headers berth takes; from any other origin 403.
 *
 * Allowed origins come from the agent config as Nomad offers it: `http_api_response_headers`
 * (headers added to every HTTP API answer, config_http.ts); its `Access-Control-Allow-Origin` value
 * is the origin the operator lets browsers use ("*" for any). Nothing else is allowed.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { BerthError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";
import { ERROR_CODE_HEADER, sendError } from "../wire/http_io.js";
import { isUiSameOrigin } from "./ui_origin.js";

export interface HttpApiSettings {
  /** Added to every HTTP API answer (Nomad's `http_api_response_headers`). */
  responseHeaders: Readonly<Record<string, string>>;
  /** Origins a browser may write from and open WebSockets from; "*" allows any. */
  allowedOrigins: readonly string[];
}

export const NO_HTTP_API_SETTINGS: HttpApiSettings = { responseHeaders: {}, allowedOrigins: [] };

const WRITES = new Set(["PUT", "POST", "DELETE", "PATCH"]);
const SIMPLE_TYPES = new Set(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]);
const PREFLIGHT_METHODS = "GET, PUT, POST, DELETE";
const PREFLIGHT_HEADERS = "Content-Type, X-Nomad-Token, Authorization, X-Nomad-CSI-Secrets";

export class OriginGuard {
  private readonly anyOrigin: boolean;
  private readonly origins: Set<string>;
  private readonly headers: [string, string][];

  constructor(
    settings: HttpApiSettings,
    private readonly log: Logger,
  ) {
    this.anyOrigin = settings.allowedOrigins.includes("*");
    this.origins = new Set(settings.allowedOrigins.map((o) => o.toLowerCase()));
    this.headers = Object.entries(settings.responseHeaders);
  }

  /**
   * Sets the configured response headers, answers a preflight, and refuses a request the rule
   * above refuses. True when the request may go on to its route; false when it was answered here.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    for (const [k, v] of this.headers) res.setHeader(k, v);
    const origin = originOf(req);
    if (origin === undefined) return true;
    const method = req.method ?? "GET";
    if (method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
      if (!this.allowed(origin)) return this.refuse(res, origin, "send CORS preflight requests");
      res.writeHead(204, {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": PREFLIGHT_METHODS,
        "Access-Control-Allow-Headers": PREFLIGHT_HEADERS,
        "Access-Control-Max-Age": "600",
        Vary: "Origin",
      });
      res.end();
      return false;
    }
    if (!WRITES.has(method)) return true;
    if (!this.allowed(origin) && !isUiSameOrigin(req, origin))
      return this.refuse(res, origin, `send ${method} requests`);
    const type = mediaType(req.headers["content-type"]);
    if (type === "" || SIMPLE_TYPES.has(type)) {
      sendError(
        res,
        new BerthError(
          "ERR_PERMISSION_DENIED",
          `cross-origin ${method} with Content-Type ${JSON.stringify(type || "(none)")} refused: a browser sends ` +
            "that without a CORS preflight; berth's API takes JSON, send Content-Type: application/json",
        ),
      );
      return false;
    }
    return true;
  }

  /** An upgrade's refusal (a WebSocket from an origin that is not allowed), or null. */
  checkUpgrade(req: IncomingMessage): BerthError | null {
    const origin = originOf(req);
    if (origin === undefined || this.allowed(origin)) return null;
    this.log.warn("refused a WebSocket from a browser origin", { origin: shown(origin), path: pathOf(req) });
    return new BerthError("ERR_PERMISSION_DENIED", refusalText(origin, "open WebSockets"));
  }

  /**
   * Refuses upgrades from origins that are not allowed before any upgrade handler (agent RPC,
   * exec) sees them: its listener is prepended, and later listeners skip a destroyed socket.
   */
  attach(server: HttpServer): void {
    server.prependListener("upgrade", (req: IncomingMessage, socket: Duplex) => {
      if (socket.destroyed) return;
      const refusal = this.checkUpgrade(req);
      if (!refusal) return;
      const body = `${refusal.message}\n`;
      socket.end(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
          `${ERROR_CODE_HEADER}: ${refusal.code}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      // Destroyed at once so the RPC and exec handlers (which check `destroyed`) never take it; the
      // short answer is already in the socket's send buffer.
      socket.destroy();
    });
  }

  private allowed(origin: string): boolean {
    return this.anyOrigin || this.origins.has(origin.toLowerCase());
  }

  private refuse(res: ServerResponse, origin: string, what: string): false {
    this.log.warn("refused a request from a browser origin", { origin: shown(origin), what });
    sendError(res, new BerthError("ERR_PERMISSION_DENIED", refusalText(origin, what)));
    return false;
  }
}

function refusalText(origin: string, what: string): string {
  return (
    `cross-origin request refused: Origin ${shown(origin)} may not ${what} ` +
    "(allow a browser origin with the agent config's http_api_response_headers { Access-Control-Allow-Origin = ... })"
  );
}

function originOf(req: IncomingMessage): string | undefined {
  const o = req.headers.origin;
  return typeof o === "string" ? o : undefined;
}

/** The Origin as shown in logs and answers: quoted, and cut short (it is the caller's text). */
function shown(origin: string): string {
  return JSON.stringify(origin.length > 200 ? `${origin.slice(0, 200)}…` : origin);
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? "").split("?")[0] ?? "";
}

/** `text/plain; charset=utf-8` → `text/plain`; missing → "". */
function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}
