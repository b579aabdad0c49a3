/**
 * X-Nomad-KnownLeader and X-Nomad-LastContact as they really are: every query answer carries
 * them (Nomad's setMeta), and a server of a cluster that has lost sight of the leader says so. The
 * router binds each response to its server's cluster view; a response bound to none (a handler
 * built without one, in unit tests) answers as a single server does: a known leader, contact 0.
 */
import type { ServerResponse } from "node:http";
import type { ClusterView } from "../leader/cluster_view.js";

const views = new WeakMap<ServerResponse, ClusterView>();

export function bindLeaderView(res: ServerResponse, view: ClusterView): void {
  views.set(res, view);
}

export function leaderHeaders(res: ServerResponse): Record<string, string> {
  const view = views.get(res);
  if (!view) return { "X-Nomad-KnownLeader": "true", "X-Nomad-LastContact": "0" };
  return {
    "X-Nomad-KnownLeader": String(view.leader() !== null),
    "X-Nomad-LastContact": String(Math.max(0, Math.round(view.lastContactMs()))),
  };
}
