/**
 * The node agents connected to this server, by node ID. Server → node calls (ClientCSI.*) travel
 * back over the connection the agent opened; a node without a live connection cannot take them.
 * With several servers, a node connected to another server is reached through `remote` (the
 * forwarder, server/leader/forward.ts); `callLocal` never forwards (a forwarded call runs here).
 */
import { BerthError } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";
import { fenceRefusal } from "../../internal/fence.js";
import type { CallOptions } from "../../internal/rpc/peer.js";

/** What the registry needs from a connection: the RpcPeer satisfies it, tests pass fakes. */
export interface NodeConn {
  readonly isOpen: boolean;
  call<M extends keyof ClientMethods>(
    method: M,
    params: ClientMethods[M][0],
    opts?: CallOptions,
  ): Promise<ClientMethods[M][1]>;
  close(): void;
}

/** Nodes connected to other servers of the cluster. */
export interface RemoteNodes {
  isConnected(nodeId: string): boolean;
  call<M extends keyof ClientMethods>(
    nodeId: string,
    method: M,
    params: ClientMethods[M][0],
    opts?: CallOptions,
  ): Promise<ClientMethods[M][1]>;
}

/** Told when a node's connection is bound here and when it is gone (the node directory). */
export interface ConnectionListener {
  connected(nodeId: string): void;
  disconnected(nodeId: string): void;
}

export class NodeConnections {
  private readonly conns = new Map<string, NodeConn>();
  /** Set by a server of a cluster when it joins (leader/cluster.ts); absent for a single server. */
  remote: RemoteNodes | undefined;
  listener: ConnectionListener | undefined;

  /** Binds `conn` to `nodeId`; an older connection of the same node is closed (the agent reconnected). */
  add(nodeId: string, conn: NodeConn): void {
    const old = this.conns.get(nodeId);
    this.conns.set(nodeId, conn);
    if (old && old !== conn) old.close();
    this.listener?.connected(nodeId);
  }

  /** Unbinds `conn` only if it is still the node's current connection. */
  remove(nodeId: string, conn: NodeConn): void {
    if (this.conns.get(nodeId) !== conn) return;
    this.conns.delete(nodeId);
    this.listener?.disconnected(nodeId);
  }

  get(nodeId: string): NodeConn | undefined {
    const c = this.conns.get(nodeId);
    return c?.isOpen ? c : undefined;
  }

  /** Connected to this server, or (in a cluster) to another one. */
  isConnected(nodeId: string): boolean {
    return this.get(nodeId) !== undefined || this.remote?.isConnected(nodeId) === true;
  }

  call<M extends keyof ClientMethods>(
    nodeId: string,
    method: M,
    params: ClientMethods[M][0],
    opts?: CallOptions,
  ): Promise<ClientMethods[M][1]> {
    // The leader term or volume lock the work began under must still hold as it is sent (fence.ts).
    const fenced = fenceRefusal();
    if (fenced !== undefined) {
      return Promise.reject(new BerthError("ERR_FENCED", `${method} to node ${nodeId} not sent: ${fenced}`));
    }
    if (!this.get(nodeId) && this.remote?.isConnected(nodeId))
      return this.remote.call(nodeId, method, params, opts);
    return this.callLocal(nodeId, method, params, opts);
  }

  /** Over this server's own connection to the node only. */
  callLocal<M extends keyof ClientMethods>(
    nodeId: string,
    method: M,
    params: ClientMethods[M][0],
    opts?: CallOptions,
  ): Promise<ClientMethods[M][1]> {
    const c = this.get(nodeId);
    if (!c) {
      return Promise.reject(new BerthError("ERR_NODE_NOT_CONNECTED", `node ${nodeId} is not connected`));
    }
    return c.call(method, params, opts);
  }

  closeAll(): void {
    for (const c of this.conns.values()) c.close();
    this.conns.clear();
  }
}
