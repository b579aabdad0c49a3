/**
 * Node liveness across leadership changes. The node endpoints of every server report heartbeats
 * here (`reset`); only the leader runs a HeartbeatMonitor, a fresh one per term, whose start arms
 * every node that is not down with one full TTL: a new leader gives each node a grace to reach it
 * (or its connection's server) again, never a mass "down".
 *
 * With several servers a node heartbeats to the server holding its connection, which may not be
 * the leader. The leader counts a node whose connection another live server holds (the node
 * directory, bound to that server's lease) as heard from, re-checked every third of a TTL; a node
 * whose server dies drops out of the directory when that server's lease expires, and then has its
 * TTL to connect elsewhere. The same sweep arms any up node of the store the monitor has not heard
 * of in this term (one that registered on another server and went silent between two sweeps), so
 * every node's liveness is watched by the leader whichever server it reached.
 */
import type { HeartbeatMonitor } from "../heartbeat.js";
import type { LeaderLoop } from "./gate.js";
import { isNodeOutOfContact, type NodeStatus } from "../../structs/node.js";

/** What the node endpoint needs: report a heartbeat, and the TTL to hand the node. */
export interface Liveness {
  reset(nodeId: string): void;
  readonly ttlMs: number;
}

export class ClusterLiveness implements Liveness {
  private monitor: HeartbeatMonitor | null = null;

  constructor(
    readonly ttlMs: number,
    private readonly create: () => HeartbeatMonitor,
    /** Nodes whose connection another live server holds (empty for a single server). */
    private readonly heldElsewhere: () => Iterable<string>,
    /** With several servers: every node of the store, with its status; null for a single server. */
    private readonly nodes: (() => Iterable<{ ID: string; Status: NodeStatus }>) | null = null,
  ) {}

  /** Nodes the current term's monitor has armed. */
  private armed = new Set<string>();

  reset(nodeId: string): void {
    if (!this.monitor) return;
    this.armed.add(nodeId);
    this.monitor.reset(nodeId);
  }

  /** The leader-only part, for the gate. */
  loop(): LeaderLoop {
    let sweep: NodeJS.Timeout | undefined;
    return {
      name: "node liveness",
      start: () => {
        const monitor = this.create();
        this.monitor = monitor;
        this.armed = new Set(
          [...(this.nodes?.() ?? [])].filter((n) => !isNodeOutOfContact(n)).map((n) => n.ID),
        );
        monitor.start();
        const touch = () => {
          for (const id of this.heldElsewhere()) this.reset(id);
          for (const n of this.nodes?.() ?? []) {
            // A down node's timer is gone: it is armed again once it is up again.
            if (isNodeOutOfContact(n)) this.armed.delete(n.ID);
            else if (!this.armed.has(n.ID)) this.reset(n.ID);
          }
        };
        touch();
        sweep = setInterval(touch, Math.max(100, this.ttlMs / 3));
        sweep.unref();
      },
      stop: async () => {
        clearInterval(sweep);
        const monitor = this.monitor;
        this.monitor = null;
        await monitor?.stop();
      },
    };
  }
}
