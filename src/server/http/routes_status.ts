/**
 * Nomad's status routes and the server members list (command/agent/status_endpoint.go,
 * agent_endpoint.go):
 * - `GET /v1/status/leader`: the leader's RPC address as a JSON string, "HOST:PORT" (berth's agent
 *   RPC rides on the HTTP listener, so it is the leader's HTTP address); "" while there is none.
 * - `GET /v1/status/peers`: every live server's RPC address, a JSON list.
 * - `GET /v1/agent/members`: Nomad's ServerMembers shape, `{ServerName, ServerRegion, ServerDC,
 *   Members: [AgentMember]}`; each member's Tags carry what `nomad server members` reads (region,
 *   dc, port, build, id, role) and berth adds `leader_since` (RFC 3339) on the leader.
 */
import type { ClusterView } from "../leader/cluster_view.js";
import type { ServerMember } from "../leader/keys.js";
import type { Route } from "../request_ctx.js";
import { sendJson } from "./respond.js";

/** Nomad's api.AgentMember. */
export interface AgentMemberView {
  Name: string;
  Addr: string;
  Port: number;
  Tags: Record<string, string>;
  Status: string;
  ProtocolMin: number;
  ProtocolMax: number;
  ProtocolCur: number;
  DelegateMin: number;
  DelegateMax: number;
  DelegateCur: number;
}

export interface ServerMembersView {
  ServerName: string;
  ServerRegion: string;
  ServerDC: string;
  Members: AgentMemberView[];
}

function hostPort(m: ServerMember): { host: string; port: number } {
  const i = m.RPCAddr.lastIndexOf(":");
  return { host: m.RPCAddr.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(m.RPCAddr.slice(i + 1)) };
}

export function memberView(m: ServerMember, leaderSinceMs: number | null): AgentMemberView {
  const { host, port } = hostPort(m);
  return {
    Name: m.Name,
    Addr: host,
    Port: port,
    Tags: {
      role: "nomad",
      region: m.Region,
      dc: m.Datacenter,
      port: String(port),
      id: m.ID,
      build: "berth",
      started: new Date(m.StartTime).toISOString(),
      ...(leaderSinceMs === null ? {} : { leader_since: new Date(leaderSinceMs).toISOString() }),
    },
    Status: "alive",
    ProtocolMin: 1,
    ProtocolMax: 1,
    ProtocolCur: 1,
    DelegateMin: 0,
    DelegateMax: 0,
    DelegateCur: 0,
  };
}

function view(cluster: ClusterView | undefined): ClusterView {
  // Every Server sets it; a test's bare handler without one is a programming error.
  if (!cluster) throw new Error("the HTTP API was built without a cluster view");
  return cluster;
}

export const statusLeader: Route = (ctx, api) => {
  const leader = view(api.cluster).leader();
  sendJson(ctx.res, leader ? leader.member.RPCAddr : "");
  return Promise.resolve();
};

export const statusPeers: Route = async (ctx, api) => {
  const members = await view(api.cluster).members();
  sendJson(
    ctx.res,
    members.map((m) => m.RPCAddr),
  );
};

export const agentMembers: Route = async (ctx, api) => {
  const cluster = view(api.cluster);
  const leader = cluster.leader();
  const members = await cluster.members();
  const body: ServerMembersView = {
    ServerName: cluster.self.Name,
    ServerRegion: cluster.self.Region,
    ServerDC: cluster.self.Datacenter,
    Members: members.map((m) => memberView(m, leader?.member.ID === m.ID ? leader.sinceMs : null)),
  };
  sendJson(ctx.res, body);
};
