/**
 * The node agents connected to this server, by node ID. Server → node calls (ClientCSI.*) travel
 * back over the connection the agent opened; a node without a live connection cannot take them.
 */
import { BerthError } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";
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

export class NodeConnections {
  private readonly conns = new Map<string, NodeConn>();

  /** Binds `conn` to `nodeId`; an older connection of the same node is closed (the agent reconnected). */
  add(nodeId: string, conn: NodeConn): void {
    const old = this.conns.get(nodeId);
    this.conns.set(nodeId, conn);
    if (old && old !== conn) old.close();
  }

  /** Unbinds `conn` only if it is still the node's current connection. */
  remove(nodeId: string, conn: NodeConn): void {
    if (this.conns.get(nodeId) === conn) this.conns.delete(nodeId);
  }

  get(nodeId: string): NodeConn | undefined {
    const c = this.conns.get(nodeId);
    return c?.isOpen ? c : undefined;
  }

  isConnected(nodeId: string): boolean {
    return this.get(nodeId) !== undefined;
  }

  call<M extends keyof ClientMethods>(
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
