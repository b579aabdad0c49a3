/**
 * What each agent RPC method (`/v1/agent/rpc`, node agent → server) requires of its caller: the
 * README's security table lists these, and a test checks the two are the same. Typed over every
 * ServerMethods key, so a method cannot be added to the protocol without saying what it requires.
 * The checks themselves live where the method is served (agent.ts binds a connection to the node
 * that registered on it with its secret; node_auth.ts, node_scope.ts, claim.ts,
 * release_progress.ts, volume_usage.ts and node.ts keep that node to its own allocs and their volumes).
 */
import type { ServerMethods } from "../../structs/rpc.js";

const OWN_NODE = "a connection registered with the node's secret, naming its own node";

export const AGENT_RPC_REQUIREMENTS: { readonly [M in keyof ServerMethods]: string } = {
  "Node.Register":
    "the node's secret (bound at its first registration; failures rate-limited per client address)",
  "Node.Heartbeat": OWN_NODE,
  "Node.UpdateFingerprint": OWN_NODE,
  "Node.GetAllocs": OWN_NODE,
  "Node.UpdateAllocs": `${OWN_NODE}; only allocs placed on it`,
  "CSIVolume.GetForNode": `${OWN_NODE}; only volumes its allocs request`,
  "CSIVolume.Claim": `${OWN_NODE}; an alloc placed on it, a volume its group requests in the alloc's namespace (write only where a request is not read-only)`,
  "CSIVolume.Unpublish": `${OWN_NODE}; only claims it holds`,
  "CSIVolume.ReleaseProgress": `${OWN_NODE}; only claims it holds`,
  "CSIVolume.UpdateUsage": `${OWN_NODE}; only volumes a live claim of its allocs holds (others are not recorded)`,
};
