/**
 * Server → node calls for a node connected to another server. A ClientCSI (or ClientAlloc) call
 * for a node whose connection this server does not hold is sent, as one HTTP POST, to the server
 * the node directory names; that server runs it over its own connection to the node and answers
 * the result, or the error with its code (X-Berth-Error-Code), so retry rules see the same codes
 * as for a local call. A forwarded call is never forwarded again.
 *
 * Only a server may forward (peer_http.ts: the cluster secret, and with `tls.rpc` a server's
 * certificate); anything else is refused with 403 ERR_PERMISSION_DENIED before the body is read.
 */
import type http from "node:http";
import { BerthError, isBerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import type { CallOptions } from "../../internal/rpc/peer.js";
import type { ServerTls } from "../../internal/tls.js";
import type { NodeConnections, RemoteNodes } from "../clientconn/connections.js";
import { readJson, sendError } from "../wire/http_io.js";
import type { NodeDirectory, PrefixMirror } from "./directory.js";
import { parseMember } from "./keys.js";
import { peerRefusal, postToPeer } from "./peer_http.js";

export { CLUSTER_SECRET_HEADER, secretsEqual } from "./peer_http.js";

export const FORWARD_PATH = "/v1/internal/client-rpc";

/** The methods a server may forward: the server → node calls. */
const FORWARDABLE = /^Client(CSI|Alloc)\.[A-Za-z]+$/;
/** What a forward may add to the call's own timeout (the hop, the answer). */
const HOP_SLACK_MS = 5_000;
const DEFAULT_TIMEOUT_MS = 60_000;

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
    return peerRefusal(req, this.tls, this.secret(), "node call");
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
    return postToPeer(addr, FORWARD_PATH, body, {
      secret: this.secret(),
      tls: this.tls,
      timeoutMs,
      signal,
    });
  }
}
