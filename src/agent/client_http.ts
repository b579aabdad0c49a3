/**
 * A client-only agent's HTTP API (Nomad's clients serve it too, on the same `-http-addr` /
 * `addresses { http }` / `ports { http }` as a server, with the agent's `tls { http }`):
 *
 * - answered here, from this node: `GET /v1/metrics` (its own registry, as a server's route:
 *   server/http/routes_metrics.ts), `GET /v1/agent/health` (Nomad's client part: ok while the node
 *   holds a connection to a server, else 500 "no known servers"), `GET /v1/agent/self` (its
 *   settings; no member, it is not a server);
 * - everything else is forwarded to the server this node is connected to (http_forward.ts), so
 *   `BERTH_ADDR=client:4646 berth job status` works, and so do `alloc logs`, `alloc fs` and
 *   `alloc status -stats`: the server reads them from the alloc's node over the node's own
 *   connection, as for any caller.
 *
 * ACLs. A node agent holds no ACL state and cannot resolve a token; it asks a server. Forwarded
 * requests carry the caller's token and the server checks it as for any request, so nothing a
 * server guards is served by the node without the server's check — alloc data included, which is
 * why logs and fs are forwarded rather than read here. The node's own answers: health needs no
 * token (Nomad's, for load balancers); self needs `agent:read`, and metrics need it when
 * `telemetry { metrics_require_acl = true }`, and for those the node sends the caller's token to a
 * server's `/v1/agent/self` (which needs exactly `agent:read`) and serves only on a 200 — a 403 is
 * passed on, no server reachable is a 503. A server with ACLs off answers 200 to anyone, so the
 * node is as open as its servers.
 */
import http from "node:http";
import https from "node:https";
import type { Logger } from "../internal/log.js";
import type { Telemetry } from "../internal/metrics/telemetry.js";
import type { ClientTls, ServerTls } from "../internal/tls.js";
import { asBerthError, BerthError } from "../structs/errors.js";
import type { AgentInfo } from "../server/agent_info.js";
import { requestSecret } from "../server/acl/secret.js";
import { parseAddr } from "../server/http/bind.js";
import { sendJson } from "../server/http/respond.js";
import { healthOf, sendHealth } from "../server/http/routes_agent.js";
import { sendMetrics } from "../server/http/routes_metrics.js";
import { listen, type ListenerAddress } from "../server/listener.js";
import { createListener } from "../server/tls_listener.js";
import { sendError } from "../server/wire/http_io.js";
import { forwardRequest, serverTlsOptions } from "./http_forward.js";

export interface ClientHttpOptions {
  /** HOST:PORT to listen on. */
  addr: string;
  /** The listener's TLS (agent `tls { http = true }`); undefined: plain HTTP. */
  tls: ServerTls | undefined;
  /** How the node agent dials its servers (agent `tls`), for forwarded requests too. */
  dialTls: ClientTls | undefined;
  telemetry: Telemetry;
  agent: AgentInfo;
  /** The server to forward to and ask about tokens (http(s)://HOST:PORT); null: none known. */
  server: () => string | null;
  log: Logger;
}

/** How long the node waits for a server's answer about a token. */
export const AUTHORIZE_TIMEOUT_MS = 10_000;

type LocalRoute = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  query: URLSearchParams,
) => Promise<void>;

export class ClientHttp {
  private listener: http.Server | null = null;
  private address: ListenerAddress | null = null;

  constructor(private readonly opts: ClientHttpOptions) {}

  /** "HOST:PORT" the listener is bound to; null before start. */
  get boundAddress(): string | null {
    return this.address?.bound ?? null;
  }

  /** "http(s)://HOST:PORT" this host dials the listener at; null before start. */
  get url(): string | null {
    return this.address?.url ?? null;
  }

  /** Binds the listener; rejects on a bind error (the caller decides whether that is fatal). */
  async start(): Promise<void> {
    const listener = createListener(this.opts.tls, {}, (req, res) => {
      this.handle(req, res).catch((err: unknown) => sendError(res, err));
    });
    this.address = await listen(listener, parseAddr(this.opts.addr), this.opts.tls);
    this.listener = listener;
  }

  async stop(): Promise<void> {
    const l = this.listener;
    if (!l) return;
    this.listener = null;
    await new Promise<void>((resolve) => {
      l.close(() => resolve());
      // Open blocking queries and follows end with the agent.
      l.closeAllConnections();
    });
  }

  private readonly local: Record<string, LocalRoute> = {
    "/v1/agent/health": async (_req, res, query) => {
      sendHealth(res, healthOf(this.opts.agent, null, query.getAll("type")));
    },
    "/v1/agent/self": async (req, res) => {
      await this.authorize(req);
      sendJson(res, { config: this.opts.agent.config, member: null, stats: {} });
    },
    "/v1/metrics": async (req, res, query) => {
      if (this.opts.telemetry.settings.metricsRequireAcl) await this.authorize(req);
      await sendMetrics(res, this.opts.telemetry, query.get("format") ?? "");
    },
  };

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname;
    const local = this.local[path];
    if (local) {
      try {
        if (req.method !== "GET")
          throw new BerthError("ERR_METHOD_NOT_ALLOWED", `no route for ${req.method ?? "?"} ${path}`);
        await local(req, res, url.searchParams);
      } catch (err) {
        const e = asBerthError(err);
        if (e.code === "ERR_INTERNAL") this.opts.log.error("http request failed", { path, error: e.message });
        sendError(res, e);
      }
      return;
    }
    const server = this.opts.server();
    if (server === null) throw new BerthError("ERR_RPC_UNAVAILABLE", "this node knows no server to ask");
    await forwardRequest(req, res, server, this.opts.dialTls);
  }

  /** Resolves when a server says the request's token has `agent:read` (see the module comment). */
  private async authorize(req: http.IncomingMessage): Promise<void> {
    const server = this.opts.server();
    if (server === null) throw new BerthError("ERR_RPC_UNAVAILABLE", "no server to check the ACL token with");
    const status = await probeAgentRead(server, requestSecret(req.headers), this.opts.dialTls);
    if (status === 200) return;
    if (status === 403) throw new BerthError("ERR_PERMISSION_DENIED", "Permission denied");
    throw new BerthError("ERR_RPC_UNAVAILABLE", `the server could not check the ACL token (HTTP ${status})`);
  }
}

/** The status of `GET /v1/agent/self` on `server` with `secret` (the body is dropped). */
function probeAgentRead(
  server: string,
  secret: string | undefined,
  dialTls: ClientTls | undefined,
): Promise<number> {
  const target = new URL("/v1/agent/self", server);
  const secure = target.protocol === "https:";
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(target, {
      method: "GET",
      headers: secret ? { "X-Nomad-Token": secret } : {},
      signal: AbortSignal.timeout(AUTHORIZE_TIMEOUT_MS),
      ...(secure ? serverTlsOptions(dialTls) : {}),
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (err) =>
      reject(
        new BerthError("ERR_RPC_UNAVAILABLE", `no server answered at ${server}: ${err.message}`, {
          cause: err,
        }),
      ),
    );
    req.end();
  });
}
