/** What the endpoints share: built once by Server, passed to each endpoint group. */
import type { EvalTrigger } from "../structs/eval.js";
import type { Logger } from "../internal/log.js";
import type { ControllerClient } from "./clientconn/controller.js";
import type { NodeConnections } from "./clientconn/connections.js";
import type { KeyedMutex } from "../internal/keyed_mutex.js";
import type { EvalOptions, EvalResult } from "./scheduler/evaluate_in.js";
import type { Wake } from "./scheduler/blocked_wait.js";
import type { StateStore } from "./state/store.js";

/**
 * What the endpoints ask of the scheduler. A single server: its Scheduler. A server of an etcd
 * cluster: the leader's, reached through leader/scheduler_front.ts (only the leader runs passes).
 */
export interface JobScheduler {
  /** Runs a pass over the job and answers what it did (the eval it recorded, placements, failures). */
  evaluate(namespace: string, id: string, trigger?: EvalTrigger, opts?: EvalOptions): Promise<EvalResult>;
  /**
   * Capacity may have appeared: re-evaluate the blocked jobs that `wakes` (what the write changed,
   * scheduler/blocked_wait.ts) may unblock; absent, every blocked job (never rejects; callers do
   * not wait).
   */
  retryBlocked(wakes?: readonly Wake[]): Promise<void>;
}

export interface ServerDeps {
  store: StateStore;
  scheduler: JobScheduler;
  conns: NodeConnections;
  controllers: ControllerClient;
  /** Serialises claim/unpublish/create/delete/deregister per volume (`namespace/id`). */
  volumeLocks: KeyedMutex;
  log: Logger;
  /**
   * Told when a claim's ControllerPublish is refused FAILED_PRECONDITION or RESOURCE_EXHAUSTED
   * (rpc/claim_publish.ts): the leader's attachment reconciler then reconciles the plugin at once.
   */
  publishRefused?: (pluginId: string) => void;
}

export function volumeKey(namespace: string, id: string): string {
  return `${namespace}/${id}`;
}
