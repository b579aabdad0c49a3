/**
 * One agent connection's side of the agent RPC (agent.ts): which node it is bound to, and the
 * calls a registered node makes. The first Node.Register that succeeds binds the connection to its
 * node; every later call must name that node (`NodeBinding.check`), and calls before it are
 * refused. A peer's body is untrusted: a missing body or NodeID is the peer's error
 * (ERR_VALIDATION), never a TypeError here.
 */
import { BerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ClientMethods, ServerMethods } from "../../structs/rpc.js";
import type { RpcPeer } from "../../internal/rpc/peer.js";
import type { ClaimEndpoint } from "./claim.js";
import type { NodeEndpoint } from "./node.js";
import type { VolumeUsageEndpoint } from "./volume_usage.js";

export interface AgentEndpoints {
  node: NodeEndpoint;
  claim: ClaimEndpoint;
  /** CSIVolume.UpdateUsage; absent: the method is not served (refused as unknown). */
  usage?: VolumeUsageEndpoint;
}

export type AgentPeer = RpcPeer<ServerMethods, ClientMethods>;

export class NodeBinding {
  /** The node whose registration succeeded on this connection; undefined before. */
  nodeId: string | undefined;
  /** A Node.Register is in flight (one at a time). */
  registering = false;

  /** Throws unless `req` names the node this connection registered. */
  check(req: unknown): void {
    const requested = isObject(req) ? req.NodeID : undefined;
    if (typeof requested !== "string") throw validationError("NodeID", "must be a node ID string");
    if (this.nodeId === undefined) {
      throw new BerthError(
        "ERR_PERMISSION_DENIED",
        "this connection has not registered a node (call Node.Register first)",
      );
    }
    if (requested !== this.nodeId) {
      throw new BerthError(
        "ERR_PERMISSION_DENIED",
        `this connection belongs to node ${this.nodeId}, not ${requested}`,
      );
    }
  }
}

/** Serves every call but Node.Register on `peer`, each only for the node `binding` holds. */
export function serveBoundCalls(peer: AgentPeer, binding: NodeBinding, endpoints: AgentEndpoints): void {
  const on = <M extends Exclude<keyof ServerMethods, "Node.Register">>(
    method: M,
    fn: (req: ServerMethods[M][0], signal: AbortSignal) => ServerMethods[M][1] | Promise<ServerMethods[M][1]>,
  ) =>
    peer.handle(method, async (req, signal) => {
      binding.check(req);
      return fn(req, signal);
    });
  const { node, claim, usage } = endpoints;
  on("Node.Heartbeat", (req) => node.heartbeat(req));
  on("Node.UpdateFingerprint", (req) => node.updateFingerprint(req));
  on("Node.GetAllocs", (req, signal) => node.getAllocs(req, signal));
  on("Node.UpdateAllocs", (req) => node.updateAllocs(req));
  on("CSIVolume.GetForNode", (req) => claim.getForNode(req));
  on("CSIVolume.Claim", (req, signal) => claim.claim(req, signal));
  on("CSIVolume.Unpublish", (req, signal) => claim.unpublish(req, signal));
  on("CSIVolume.ReleaseProgress", (req) => claim.reportReleaseProgress(req));
  if (usage) on("CSIVolume.UpdateUsage", (req) => usage.update(req));
}
