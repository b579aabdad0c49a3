/**
 * The peer the ClientCSI.* handlers register on, apart from client_csi.ts so that the handler
 * files it composes (client_csi_node.ts, client_csi_storage.ts) need not import it back;
 * client_csi.ts re-exports it.
 */
import type { ClientMethods } from "../../structs/rpc.js";

/** The peer as the handlers need it (RpcPeer satisfies it). */
export interface ClientCsiPeer {
  handle<M extends keyof ClientMethods>(
    method: M,
    fn: (req: ClientMethods[M][0], signal: AbortSignal) => Promise<ClientMethods[M][1]>,
  ): void;
}
