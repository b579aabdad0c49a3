/**
 * Issue 32: the agent routes operators' tools call, through a real in-process server's HTTP API:
 * `/v1/agent/health` (a load balancer's check: 200 while healthy, 500 with Nomad's JSON when a
 * part is not, `?type=`), `/v1/agent/self`, `/v1/regions`, and `/v1/job/:id/summary` (Nomad's
 * JobSummary: allocs by status per group, what could not be placed as Queued, children), and
 * `/v1/search`; the answers decode strictly into Nomad's Go api structs (test/nomadapi).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import type { AgentInfo } from "../../../src/server/agent_info.js";
import { Server } from "../../../src/server/server.js";
import { decodeGo } from "../../nomadapi/go_decode.js";

async function start(t: { after(fn: () => unknown): void }, agentInfo?: AgentInfo): Promise<string> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    ...(agentInfo ? { agentInfo } : {}),
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

interface Health {
  ok: boolean;
  message: string;
}
interface Answers {
  health: { server?: Health; client?: Health };
  self: { config: { NodeName: string }; member: { Name: string; Tags: Record<string, string> } };
  summary: {
    JobID: string;
    Namespace: string;
    Summary: Record<string, Record<string, number>>;
    Children: Record<string, number>;
    CreateIndex: number;
    ModifyIndex: number;
  };
  text: string;
  list: string[];
}

/** The answer's status and body: JSON when it is JSON, else the text (berth's errors). */
async function get<K extends keyof Answers>(
  base: string,
  path: string,
  _as: K,
): Promise<{ status: number; json: Answers[K] }> {
  const res = await fetch(base + path);
  const text = await res.text();
  const json = (text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : text) as Answers[K];
  return { status: res.status, json };
}

test("agent health, self and regions as Nomad answers them", async (t) => {
  let connected = true;
  const info: AgentInfo = {
    config: {
      Region: "global",
      Datacenter: "dc1",
      NodeName: "n1",
      DataDir: "/var/lib/berth",
      Version: "0.1.0",
      ServerEnabled: true,
      ClientEnabled: true,
      AclEnabled: false,
    },
    client: () => ({ connected }),
  };
  const base = await start(t, info);
  assert.deepEqual(await get(base, "/v1/agent/health", "health"), {
    status: 200,
    json: { server: { ok: true, message: "ok" }, client: { ok: true, message: "ok" } },
  });
  connected = false;
  const down = await get(base, "/v1/agent/health", "health");
  assert.equal(down.status, 500, "a load balancer sees the node agent without a server");
  assert.deepEqual(down.json.client, { ok: false, message: "no known servers" });
  assert.deepEqual((await get(base, "/v1/agent/health?type=server", "health")).json, {
    server: { ok: true, message: "ok" },
  });
  const bad = await get(base, "/v1/agent/health?type=nope", "text");
  assert.equal(bad.status, 400);
  assert.match(bad.json, /type/);

  const self = await get(base, "/v1/agent/self", "self");
  assert.equal(self.status, 200);
  assert.equal(self.json.config.NodeName, "n1");
  assert.match(self.json.member.Name, /\.global$/);
  assert.equal(self.json.member.Tags.region, "global");
  assert.deepEqual((await get(base, "/v1/regions", "list")).json, ["global"]);

  // A server without a node agent: asking for the client's health says it is not enabled.
  const bare = await start(t);
  const noClient = await get(bare, "/v1/agent/health?type=client", "health");
  assert.equal(noClient.status, 500);
  assert.deepEqual(noClient.json, { client: { ok: false, message: "client not enabled" } });
});

test("job summary: each group's allocs by status and what could not be placed (Queued)", async (t) => {
  const base = await start(t);
  const res = await fetch(`${base}/v1/jobs`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      Job: {
        ID: "web",
        TaskGroups: [
          { Name: "a", Count: 3, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] },
          { Name: "b", Count: 1, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] },
        ],
      },
    }),
  });
  assert.equal(res.status, 200, await res.text());
  // No node: nothing can be placed, every alloc is queued.
  const summary = await get(base, "/v1/job/web/summary", "summary");
  assert.equal(summary.status, 200);
  decodeGo(summary.json, "JobSummary");
  assert.equal(summary.json.JobID, "web");
  assert.equal(summary.json.Namespace, "default");
  assert.deepEqual(summary.json.Summary.a, {
    Queued: 3,
    Complete: 0,
    Failed: 0,
    Running: 0,
    Starting: 0,
    Lost: 0,
    Unknown: 0,
  });
  assert.equal(summary.json.Summary.b!.Queued, 1);
  assert.deepEqual(summary.json.Children, { Pending: 0, Running: 0, Dead: 0 });
  assert.ok(summary.json.ModifyIndex >= summary.json.CreateIndex);
  assert.equal((await get(base, "/v1/job/nope/summary", "text")).status, 404);
});

async function put(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(base + path, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

test("prefix search: matches per context in ID order, at most 20 with a truncation flag; bad input is a 400", async (t) => {
  const base = await start(t);
  for (let i = 0; i < 22; i++) {
    const id = `api-${String(i).padStart(2, "0")}`;
    const res = await put(base, "/v1/jobs", {
      Job: {
        ID: id,
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] }],
      },
    });
    assert.equal(res.status, 200, await res.text());
  }
  await put(base, "/v1/jobs", {
    Job: {
      ID: "web",
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] }],
    },
  });
  const jobs = (await (await put(base, "/v1/search", { Prefix: "api-", Context: "jobs" })).json()) as {
    Matches: Record<string, string[]>;
    Truncations: Record<string, boolean>;
  };
  decodeGo(jobs, "SearchResponse");
  assert.equal(jobs.Matches.jobs!.length, 20);
  assert.equal(jobs.Matches.jobs![0], "api-00");
  assert.equal(jobs.Truncations.jobs, true);
  const all = (await (await put(base, "/v1/search", { Prefix: "we", Context: "all" })).json()) as {
    Matches: Record<string, string[]>;
    Truncations: Record<string, boolean>;
  };
  assert.deepEqual(all.Matches.jobs, ["web"]);
  assert.deepEqual(all.Matches.nodes, []);
  assert.equal(all.Truncations.jobs, false);
  assert.ok("namespaces" in all.Matches && "evals" in all.Matches && "volumes" in all.Matches);
  // Evaluations by the prefix of their ID, as the CLI resolves short IDs.
  const evalId = ((await (await fetch(`${base}/v1/job/web/evaluations`)).json()) as { ID: string }[])[0]!.ID;
  const evals = (await (
    await put(base, "/v1/search", { Prefix: evalId.slice(0, 6), Context: "evals" })
  ).json()) as {
    Matches: Record<string, string[]>;
  };
  assert.ok(evals.Matches.evals!.includes(evalId));
  const bad = await put(base, "/v1/search", { Prefix: "a", Context: "volume" });
  assert.equal(bad.status, 400);
  assert.match(await bad.text(), /Context: must be one of all, jobs/);
  assert.equal((await put(base, "/v1/search", { Context: "jobs" })).status, 400);
});
