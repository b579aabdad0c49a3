/**
 * Server → node calls for a node connected to another server. A ClientCSI (or ClientAlloc) call
 * for a node whose connection this server does not hold is sent, as one HTTP POST, to the server
 * the node directory names; that server runs it over its own connection to the node and answers
 * the result, or the error with its code (X-Berth-Error-Code), so retry rules see the same codes
 * as for a local call. A forwarded call is never forwarded again.
 *
 * Only a server may forward: every forward carries the cluster secret (generated once, kept in
 * etcd, which only servers can read), compared in constant time; with `tls.rpc` the peer must also
 * present a certificate signed by the CA, and with verify_server_hostname one naming
 * `server.<region>.nomad`, as issue 12's agent RPC rules ask of an RPC peer. Anything else is
 * refused with 403 ERR_PERMISSION_DENIED before the body is read.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";
import https from "node:https";
import tls, { type TLSSocket } from "node:tls";
import {
  BerthError,
  ERROR_CODES,
  isBerthError,
  validationError,
  type ErrorCode,
} from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import type { CallOptions } from "../../internal/rpc/peer.js";
import { peerCertNames, serverCertName, type ServerTls } from "../../internal/tls.js";
import type { NodeConnections, RemoteNodes } from "../clientconn/connections.js";
import { readJson, sendError } from "../http/respond.js";
import { rpcPeerRefusal } from "../tls_listener.js";
import type { NodeDirectory, PrefixMirror } from "./directory.js";
import { parseMember } from "./keys.js";

export const FORWARD_PATH = "/v1/internal/client-rpc";
export const CLUSTER_SECRET_HEADER = "x-berth-cluster-secret";

/** The methods a server may forward: the server → node calls. */
const FORWARDABLE = /^Client(CSI|Alloc)\.[A-Za-z]+$/;
/** What a forward may add to the call's own timeout (the hop, the answer). */
const HOP_SLACK_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 60_000;

/** Equal secrets, in time that does not depend on where they differ (nor on their lengths). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && expected !== "";
}

/** The receiving end, on every server's listener. */
export class ForwardServer {
  constructor(
    private readonly secret: () => string,
    private readonly conns: NodeConnections,
    private readonly tls: ServerTls | undefined,
    private readonly log: Logger,
  ) {}

  /** Takes the request when it is a forward (answering it); false leaves it to the API router. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    if ((req.url ?? "").split("?")[0] !== FORWARD_PATH) return false;
    void this.serve(req, res).catch((err: unknown) => sendError(res, err));
    return true;
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      throw new BerthError("ERR_METHOD_NOT_ALLOWED", `no route for ${req.method ?? "?"} ${FORWARD_PATH}`);
    }
    const why = this.refusal(req);
    if (why !== undefined) {
      this.log.warn("refused a forwarded node call", { client: req.socket.remoteAddress, reason: why });
      req.resume();
      throw new BerthError("ERR_PERMISSION_DENIED", `Permission denied: ${why}`);
    }
    const body = await readJson(req);
    if (!isObject(body)) throw validationError("body", "must be a JSON object");
    const { NodeID, Method, Params, TimeoutMs } = body;
    if (typeof NodeID !== "string" || NodeID === "") throw validationError("NodeID", "must be a node ID");
    if (typeof Method !== "string" || !FORWARDABLE.test(Method)) {
      throw validationError("Method", `${JSON.stringify(Method)} is not a server → node call`);
    }
    const timeoutMs = typeof TimeoutMs === "number" && TimeoutMs > 0 ? TimeoutMs : DEFAULT_TIMEOUT_MS;
    const ac = new AbortController();
    res.on("close", () => ac.abort());
    const result = await this.conns.callLocal(NodeID, Method as keyof ClientMethods, Params as never, {
      timeoutMs,
      signal: ac.signal,
    });
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ Result: result ?? null }));
  }

  /** Why this peer may not forward, or undefined when it is a server of this cluster. */
  private refusal(req: http.IncomingMessage): string | undefined {
    if (this.tls?.rpc) {
      const socket = req.socket as TLSSocket;
      const why = rpcPeerRefusal(socket, this.tls);
      if (why !== undefined) return why;
      if (
        this.tls.verifyServerHostname &&
        !peerCertNames(socket.getPeerCertificate()).includes(serverCertName())
      ) {
        return `only a server certificate (${serverCertName()}) may forward node calls`;
      }
    }
    const given = req.headers[CLUSTER_SECRET_HEADER];
    if (typeof given !== "string" || !secretsEqual(given, this.secret())) {
      return "a forwarded node call needs the cluster secret";
    }
    return undefined;
  }
}

/** The sending end: how NodeConnections reaches a node connected to another server. */
export class Forwarder implements RemoteNodes {
  constructor(
    private readonly selfId: string,
    private readonly directory: NodeDirectory,
    private readonly members: PrefixMirror,
    private readonly secret: () => string,
    private readonly tls: ServerTls | undefined,
    private readonly log: Logger,
  ) {}

  isConnected(nodeId: string): boolean {
    return this.target(nodeId) !== undefined;
  }

  async call<M extends keyof ClientMethods>(
    nodeId: string,
    method: M,
    params: ClientMethods[M][0],
    opts: CallOptions = {},
  ): Promise<ClientMethods[M][1]> {
    const addr = this.target(nodeId);
    if (addr === undefined) throw new BerthError("ERR_NODE_NOT_CONNECTED", `node ${nodeId} is not connected`);
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const body = JSON.stringify({ NodeID: nodeId, Method: method, Params: params, TimeoutMs: timeoutMs });
    try {
      const { Result } = (await this.post(addr, body, timeoutMs + HOP_SLACK_MS, opts.signal)) as {
        Result: ClientMethods[M][1];
      };
      return Result;
    } catch (err) {
      if (isBerthError(err)) throw err;
      // The other server could not be reached: the node may move; callers retry this code.
      this.log.warn("forwarding a node call failed", { node: nodeId, method, server: addr, error: err });
      throw new BerthError("ERR_NODE_NOT_CONNECTED", `node ${nodeId}'s server ${addr} cannot be reached`);
    }
  }

  /** The HTTP address of the other server holding the node's connection. */
  private target(nodeId: string): string | undefined {
    const serverId = this.directory.serverOf(nodeId);
    if (serverId === undefined || serverId === this.selfId) return undefined;
    return parseMember(this.members.get(serverId))?.HTTPAddr;
  }

  private post(addr: string, body: string, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const url = new URL(FORWARD_PATH, addr);
    const t = this.tls;
    const secure = url.protocol === "https:";
    const options: https.RequestOptions = {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Content-Length": Buffer.byteLength(body),
        [CLUSTER_SECRET_HEADER]: this.secret(),
      },
      timeout: timeoutMs,
      ...(signal ? { signal } : {}),
      ...(secure && t
        ? {
            ...(t.material.ca ? { ca: t.material.ca } : {}),
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
        req.destroy(new BerthError("ERR_RPC_TIMEOUT", `forwarded call timed out after ${timeoutMs} ms`)),
      );
      req.on("error", reject);
      req.end(body);
    });
  }
}

function codeOf(header: string | string[] | undefined): ErrorCode {
  const v = Array.isArray(header) ? header[0] : header;
  return (ERROR_CODES as readonly string[]).includes(v ?? "") ? (v as ErrorCode) : "ERR_INTERNAL";
}
