/**
 * Node agent connections: `GET /v1/agent/rpc` upgraded to a WebSocket, wrapped in an RpcPeer. The
 * first Node.Register binds the connection to that node ID; every later call must name the same
 * node, and calls before it are refused. The binding is what routes ClientCSI.* calls back.
 *
 * Node identity: the registration carries the node's secret (Node.SecretID, node_auth.ts) and is
 * the connection's handshake: nothing else is served before it succeeds. The secret travels in the
 * first frame rather than in the upgrade's headers because that is Nomad's wire shape (SecretID is
 * a field of the registered Node), because it is checked in the store transaction that writes the
 * node (so racing first registrations of one ID cannot both win), and because the listener's
 * upgrade limits (rpc_max_conns_per_client, rpc_handshake_timeout) already bound a connection
 * that never gets that far. A refused registration (ERR_PERMISSION_DENIED) leaves the node's record
 * and its live connection alone, counts against the caller's address (node_auth_limit.ts) and
 * closes this connection once the answer is sent.
 *
 * A connection that has been silent (no frame, no pong) for a whole heartbeat TTL is dropped: a
 * node cut off without a reset (a partition, a paused VM) leaves its socket open, and while this
 * server holds it the node directory says the node is connected here, which the leader counts as
 * heard from. Dropping it lets the node be marked down on time. A sweep that runs late (this
 * server was itself paused or stalled) drops nothing: the frames that queued up meanwhile are read
 * first, by the next sweep.
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import { performance } from "node:perf_hooks";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { BerthError, isBerthError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ClientMethods, ServerMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import { RpcPeer } from "../../internal/rpc/peer.js";
import type { NodeConnections } from "../clientconn/connections.js";
import { NodeBinding, serveBoundCalls, type AgentEndpoints, type AgentPeer } from "./agent_conn.js";
import { DEFAULT_NODE_AUTH_LIMITS, NodeAuthLimiter, type NodeAuthLimits } from "./node_auth_limit.js";
import { withDefaults } from "../../internal/with_defaults.js";

export const AGENT_RPC_PATH = "/v1/agent/rpc";

export class AgentRpcServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  private readonly peers = new Set<AgentPeer>();
  private readonly authLimiter: NodeAuthLimiter;
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly endpoints: AgentEndpoints,
    private readonly conns: NodeConnections,
    private readonly log: Logger,
    authLimits: Partial<NodeAuthLimits> = {},
    /** Drop a connection silent for this long (the heartbeat TTL); 0: never. */
    private readonly silentAfterMs = 0,
  ) {
    this.authLimiter = new NodeAuthLimiter(withDefaults(DEFAULT_NODE_AUTH_LIMITS, authLimits));
    if (silentAfterMs > 0) this.sweepSilent(silentAfterMs / 3, performance.now());
  }

  /** Every `everyMs`: drops the connections silent for silentAfterMs, unless this sweep is late. */
  private sweepSilent(everyMs: number, dueAt: number): void {
    this.sweep = setTimeout(() => {
      const now = performance.now();
      if (now - dueAt < everyMs / 2) {
        for (const peer of this.peers) {
          const silentMs = now - peer.lastHeardAt;
          if (silentMs <= this.silentAfterMs) continue;
          this.log.warn("dropping a node connection that has been silent for a heartbeat TTL", {
            silent_ms: Math.round(silentMs),
          });
          this.peers.delete(peer);
          peer.terminate();
        }
      }
      this.sweepSilent(everyMs, now + everyMs);
    }, everyMs);
    this.sweep.unref();
  }

  /**
   * Takes over the http server's upgrade event for the agent RPC path; `other` may take an upgrade
   * for another path first (exec sessions); the rest are refused.
   */
  attach(http: HttpServer, other?: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean): void {
    http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (socket.destroyed) return;
      if (other?.(req, socket, head)) return;
      const path = (req.url ?? "").split("?")[0];
      if (path !== AGENT_RPC_PATH) {
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
        return;
      }
      const addr = req.socket.remoteAddress ?? "";
      const wait = this.authLimiter.retryAfterMs(addr);
      if (wait > 0) {
        this.log.warn("refusing an agent RPC connection: too many failed node authentications", {
          client: addr,
          retryAfterMs: wait,
        });
        socket.end(tooManyFailures(wait));
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, addr));
    });
  }

  close(): void {
    clearTimeout(this.sweep);
    for (const p of this.peers) p.close();
    this.peers.clear();
    this.wss.close();
  }

  private accept(ws: WebSocket, addr: string): void {
    const peer: AgentPeer = new RpcPeer<ServerMethods, ClientMethods>(ws, this.log);
    this.peers.add(peer);
    const binding = new NodeBinding();
    peer.handle("Node.Register", (req) => this.register(peer, binding, addr, req));
    serveBoundCalls(peer, binding, this.endpoints);
    peer.onClosed(() => {
      this.peers.delete(peer);
      if (binding.nodeId !== undefined) this.conns.remove(binding.nodeId, peer);
    });
  }

  /**
   * Node.Register, the connection's handshake: refused while `addr` is over its failed
   * authentications, one at a time per connection; a refused identity counts against `addr` and
   * closes the connection once the answer is out; the first success binds the connection.
   */
  private async register(
    peer: AgentPeer,
    binding: NodeBinding,
    addr: string,
    req: ServerMethods["Node.Register"][0],
  ): Promise<ServerMethods["Node.Register"][1]> {
    const id = isObject(req) && isObject(req.Node) ? req.Node.ID : undefined;
    if (binding.nodeId !== undefined && id !== binding.nodeId) binding.check({ NodeID: String(id) });
    const wait = this.authLimiter.retryAfterMs(addr);
    if (wait > 0) {
      setImmediate(() => peer.close());
      throw new BerthError(
        "ERR_TOO_MANY_CONNECTIONS",
        `too many failed node authentications from ${addr}; retry in ${Math.ceil(wait / 1000)} s`,
      );
    }
    // One registration at a time: the connection binds to the node whose registration succeeds,
    // so a second one racing it could not be told apart afterwards.
    if (binding.registering) {
      throw new BerthError("ERR_CONFLICT", "a Node.Register is already in progress on this connection");
    }
    binding.registering = true;
    let resp;
    try {
      resp = await this.endpoints.node.register(req);
    } catch (err) {
      if (isBerthError(err) && err.code === "ERR_PERMISSION_DENIED") {
        this.authLimiter.failed(addr);
        this.log.warn("node registration refused: the node did not prove its identity", {
          node: typeof id === "string" ? id : undefined,
          client: addr,
          reason: err.message,
        });
        // After the answer has gone out (the peer sends it when this handler settles).
        setImmediate(() => peer.close());
      }
      throw err;
    } finally {
      binding.registering = false;
    }
    if (binding.nodeId === undefined && typeof id === "string") {
      binding.nodeId = id;
      this.conns.add(id, peer);
    }
    return resp;
  }
}

/** The whole 429 answer to an upgrade from an address that failed authentication too often. */
function tooManyFailures(waitMs: number): string {
  const body = "too many failed node authentications from your address; retry later\n";
  return (
    "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
    `Retry-After: ${Math.ceil(waitMs / 1000)}\r\nX-Berth-Error-Code: ERR_TOO_MANY_CONNECTIONS\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}
