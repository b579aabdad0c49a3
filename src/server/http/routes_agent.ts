/**
 * Nomad's agent routes that operators' tools call (command/agent/agent_endpoint.go):
 * - `GET /v1/agent/health[?type=client|server]`: `{"server": {"ok", "message"}, "client": {…}}`;
 *   the server is ok when a leader is known ("no leader" otherwise), the client when it holds a
 *   connection to a server ("no known servers"); a type this agent does not run is "… not enabled".
 *   Any part not ok answers 500 with the same JSON, as Nomad (load balancers read the status).
 * - `GET /v1/agent/self`: `{config, member, stats}` — the agent's configuration as shown (no
 *   secrets), this server's member record as in `/v1/agent/members`, and an empty stats map.
 * - `GET /v1/regions`: the regions this cluster knows — berth has one, "global".
 */
import type { ServerResponse } from "node:http";
import { validationError } from "../../structs/errors.js";
import type { AgentInfo } from "../agent_info.js";
import type { Route } from "../request_ctx.js";
import { sendJson } from "./respond.js";
import { memberView } from "./routes_status.js";

interface Health {
  ok: boolean;
  message: string;
}

/**
 * `hasLeader`: whether this agent's server knows a leader; null when the agent runs no server (a
 * client-only agent, agent/client_http.ts): its server part is then left out, or "server not
 * enabled" when `?type=server` asks for it, as Nomad's.
 */
export function healthOf(
  agent: AgentInfo | undefined,
  hasLeader: boolean | null,
  types: readonly string[],
): { client?: Health; server?: Health } {
  for (const t of types) {
    if (t !== "client" && t !== "server") throw validationError("type", 'must be "client" or "server"');
  }
  const want = (t: string) => types.length === 0 || types.includes(t);
  const out: { client?: Health; server?: Health } = {};
  if (hasLeader === null) {
    if (types.includes("server")) out.server = { ok: false, message: "server not enabled" };
  } else if (want("server"))
    out.server = hasLeader ? { ok: true, message: "ok" } : { ok: false, message: "no leader" };
  if (want("client")) {
    const client = agent?.client() ?? null;
    if (client)
      out.client = client.connected
        ? { ok: true, message: "ok" }
        : { ok: false, message: "no known servers" };
    else if (types.includes("client")) out.client = { ok: false, message: "client not enabled" };
  }
  return out;
}

export const agentHealth: Route = async (ctx, api) => {
  sendHealth(
    ctx.res,
    healthOf(api.agent, (api.cluster?.leader() ?? null) !== null, ctx.query.getAll("type")),
  );
};

/** 200 with the JSON when every part is ok, else 500 with the same JSON (load balancers read it). */
export function sendHealth(res: ServerResponse, health: { client?: Health; server?: Health }): void {
  if (Object.values(health).every((h) => h.ok)) return sendJson(res, health);
  res.writeHead(500, { "Content-Type": "application/json" });
  res.end(JSON.stringify(health));
}

export const agentSelf: Route = async (ctx, api) => {
  const leader = api.cluster?.leader() ?? null;
  const self = api.cluster?.self;
  const member = self ? memberView(self, leader?.member.ID === self.ID ? leader.sinceMs : null) : null;
  sendJson(ctx.res, { config: api.agent?.config ?? null, member, stats: {} });
};

export const regions: Route = async (ctx) => {
  sendJson(ctx.res, ["global"]);
};
