/**
 * Node agent connections: `GET /v1/agent/rpc` upgraded to a WebSocket, wrapped in an RpcPeer. The
 * first Node.Register binds the connection to that node ID; every later call must name the same
 * node, and calls before it are refused. The binding is what routes ClientCSI.* calls back.
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { BerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ClientMethods, ServerMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import { RpcPeer } from "../../internal/rpc/peer.js";
import type { NodeConnections } from "../clientconn/connections.js";
import type { ClaimEndpoint } from "./claim.js";
import type { NodeEndpoint } from "./node.js";

export const AGENT_RPC_PATH = "/v1/agent/rpc";

export interface AgentEndpoints {
  node: NodeEndpoint;
  claim: ClaimEndpoint;
}

export class AgentRpcServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  private readonly peers = new Set<RpcPeer<ServerMethods, ClientMethods>>();

  constructor(
    private readonly endpoints: AgentEndpoints,
    private readonly conns: NodeConnections,
    private readonly log: Logger,
  ) {}

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
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
  }

  close(): void {
    for (const p of this.peers) p.close();
    this.peers.clear();
    this.wss.close();
  }

  private accept(ws: WebSocket): void {
    const peer = new RpcPeer<ServerMethods, ClientMethods>(ws, this.log);
    this.peers.add(peer);
    let nodeId: string | undefined;
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
      const id = req?.Node?.ID;
      if (nodeId !== undefined && id !== nodeId) bound({ NodeID: String(id) });
      const resp = await node.register(req);
      if (nodeId === undefined) {
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
    peer.onClosed(() => {
      this.peers.delete(peer);
      if (nodeId !== undefined) this.conns.remove(nodeId, peer);
    });
  }
}
