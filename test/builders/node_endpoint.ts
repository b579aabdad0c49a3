/**
 * A NodeEndpoint over an in-memory store and scheduler, as the server wires it (no connections,
 * no controllers reachable), with its heartbeat monitor (a long TTL: the tests drive liveness).
 * Callers stop `hb` when done.
 */
import { nullLogger } from "../../src/internal/log.js";
import { KeyedMutex } from "../../src/internal/keyed_mutex.js";
import { ControllerClient } from "../../src/server/clientconn/controller.js";
import { NodeConnections } from "../../src/server/clientconn/connections.js";
import { HeartbeatMonitor } from "../../src/server/heartbeat.js";
import { NodeEndpoint } from "../../src/server/rpc/node.js";
import type { Scheduler } from "../../src/server/scheduler/scheduler.js";
import type { StateStore } from "../../src/server/state/store.js";

export function nodeEndpointOf(
  store: StateStore,
  scheduler: Scheduler,
): { ep: NodeEndpoint; hb: HeartbeatMonitor } {
  const deps = {
    store,
    scheduler,
    conns: new NodeConnections(),
    controllers: new ControllerClient(store, new NodeConnections(), nullLogger),
    volumeLocks: new KeyedMutex(),
    log: nullLogger,
  };
  const hb = new HeartbeatMonitor(store, scheduler, 60_000, nullLogger);
  return { ep: new NodeEndpoint(deps, hb), hb };
}
