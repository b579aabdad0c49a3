/**
 * What the ClientAlloc.* handlers (client_alloc.ts, client_alloc_stats.ts) are given: the peer they
 * register on, and a way to one alloc this node runs (client/alloc_access.ts builds it).
 */
import type { ClientMethods } from "../../structs/rpc.js";
import type { TaskRunnerLike } from "../allocrunner/alloc_runner_config.js";

/** What the handlers need of one alloc on this node. */
export interface AllocAccess {
  /** `<dataDir>/alloc/<id>`: the anchor log reads start from. */
  root: string;
  taskNames(): string[];
  task(name: string): TaskRunnerLike | undefined;
}

export interface ClientAllocPeer {
  handle<M extends keyof ClientMethods>(
    method: M,
    fn: (params: ClientMethods[M][0], signal: AbortSignal) => Promise<ClientMethods[M][1]>,
  ): void;
}
