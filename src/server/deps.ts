/** What the endpoints share: built once by Server, passed to each endpoint group. */
import type { Logger } from "../internal/log.js";
import type { ControllerClient } from "./clientconn/controller.js";
import type { NodeConnections } from "./clientconn/connections.js";
import type { KeyedMutex } from "../internal/keyed_mutex.js";
import type { Scheduler } from "./scheduler/scheduler.js";
import type { StateStore } from "./state/store.js";

export interface ServerDeps {
  store: StateStore;
  scheduler: Scheduler;
  conns: NodeConnections;
  controllers: ControllerClient;
  /** Serialises claim/unpublish/create/delete/deregister per volume (`namespace/id`). */
  volumeLocks: KeyedMutex;
  log: Logger;
}

export function volumeKey(namespace: string, id: string): string {
  return `${namespace}/${id}`;
}
