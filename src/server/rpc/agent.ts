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
import { BerthError, isBerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ClientMethods, ServerMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import { RpcPeer } from "../../internal/rpc/peer.js";
import type { NodeConnections } from "../clientconn/connections.js";
import type { ClaimEndpoint } from "./claim.js";
import type { NodeEndpoint } from "./node.js";
import type { VolumeUsageEndpoint } from "./volume_usage.js";
import { DEFAULT_NODE_AUTH_LIMITS, NodeAuthLimiter, type NodeAuthLimits } from "./node_auth_limit.js";

export const AGENT_RPC_PATH = "/v1/agent/rpc";

export interface AgentEndpoints {
  node: NodeEndpoint;
  claim: ClaimEndpoint;
  /** CSIVolume.UpdateUsage; absent: the method is not served (refused as unknown). */
  usage?: VolumeUsageEndpoint;
}

export class AgentRpcServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  private readonly peers = new Set<RpcPeer<ServerMethods, ClientMethods>>();
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
    this.authLimiter = new NodeAuthLimiter({ ...DEFAULT_NODE_AUTH_LIMITS, ...authLimits });
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
    const peer = new RpcPeer<ServerMethods, ClientMethods>(ws, this.log);
    this.peers.add(peer);
    let nodeId: string | undefined;
    let registering = false;
    /**
     * The request names the node this connection registered. A peer's body is untrusted: a
     * missing body or NodeID is the peer's error (ERR_VALIDATION), never a TypeError here.
     */
    const bound = (req: unknown): void => {
      const requested = isObject(req) ? req.NodeID : undefined;
      if (typeof requested !== "string") throw validationError("NodeID", "must be a node ID string");
      if (nodeId === undefined) {
        throw new BerthError(
          "ERR_PERMISSION_DENIED",
          "this connection has not registered a node (call Node.Register first)",
        );
      }
      if (requested !== nodeId) {
        throw new BerthError(
          "ERR_PERMISSION_DENIED",
          `this connection belongs to node ${nodeId}, not ${requested}`,
        );
      }
    };
    const { node, claim } = this.endpoints;
    peer.handle("Node.Register", async (req) => {
      const id = isObject(req) && isObject(req.Node) ? req.Node.ID : undefined;
      if (nodeId !== undefined && id !== nodeId) bound({ NodeID: String(id) });
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
      if (registering) {
        throw new BerthError("ERR_CONFLICT", "a Node.Register is already in progress on this connection");
      }
      registering = true;
      let resp;
      try {
        resp = await node.register(req);
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
        registering = false;
      }
      if (nodeId === undefined && typeof id === "string") {
        nodeId = id;
        this.conns.add(nodeId, peer);
      }
      return resp;
    });
    peer.handle("Node.Heartbeat", async (req) => {
      bound(req);
      return node.heartbeat(req);
    });
    peer.handle("Node.UpdateFingerprint", async (req) => {
      bound(req);
      return node.updateFingerprint(req);
    });
    peer.handle("Node.GetAllocs", async (req, signal) => {
      bound(req);
      return node.getAllocs(req, signal);
    });
    peer.handle("Node.UpdateAllocs", async (req) => {
      bound(req);
      return node.updateAllocs(req);
    });
    peer.handle("CSIVolume.GetForNode", async (req) => {
      bound(req);
      return claim.getForNode(req);
    });
    peer.handle("CSIVolume.Claim", async (req, signal) => {
      bound(req);
      return claim.claim(req, signal);
    });
    peer.handle("CSIVolume.Unpublish", async (req, signal) => {
      bound(req);
      return claim.unpublish(req, signal);
    });
    peer.handle("CSIVolume.ReleaseProgress", async (req) => {
      bound(req);
      return claim.reportReleaseProgress(req);
    });
    const { usage } = this.endpoints;
    if (usage) {
      peer.handle("CSIVolume.UpdateUsage", async (req) => {
        bound(req);
        return usage.update(req);
      });
    }
    peer.onClosed(() => {
      this.peers.delete(peer);
      if (nodeId !== undefined) this.conns.remove(nodeId, peer);
    });
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
