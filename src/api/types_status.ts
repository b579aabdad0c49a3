/**
 * The servers, as Nomad's api/agent.go and api/status.go show them: `GET /v1/agent/members`
 * (ServerMembers) and `GET /v1/status/leader`, `/v1/status/peers` (plain JSON strings).
 */

/** Nomad's api.AgentMember; berth's Tags: role, region, dc, port, id, build, started, leader_since. */
export interface AgentMember {
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

export interface ServerMembers {
  ServerName: string;
  ServerRegion: string;
  ServerDC: string;
  Members: AgentMember[];
}
