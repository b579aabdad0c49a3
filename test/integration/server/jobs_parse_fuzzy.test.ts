/**
 * Issue 32 item 5 on a real in-process server's HTTP API: `PUT /v1/jobs/parse` (Nomad's
 * JobsParseRequest: HCL in, the job's JSON out, with Variables and Canonicalize; an empty spec,
 * bad HCL and a file() call are 400s naming the problem) and `PUT /v1/search/fuzzy` (Nomad's
 * FuzzySearchRequest/Response: substring matches by context with their scopes). Answers decode
 * strictly into Nomad's Go api structs (test/nomadapi). The server is given the agent's jobspec
 * reader (agent/jobspec_parser.ts), as `berth agent -server` gives it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJobspecForServer } from "../../../src/agent/jobspec_parser.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { decodeGo } from "../../nomadapi/go_decode.js";
import { http } from "./fake_agent.js";

/** An in-memory server with the agent's jobspec reader, as `berth agent -server` runs it. */
async function startServer(t: { after(fn: () => unknown): void }): Promise<string> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    jobspecParser: parseJobspecForServer,
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

const SPEC = `variable "cmd" {
  type = string
}
job "web-app" {
  group "frontend" {
    task "webhook" {
      driver = "raw_exec"
      config {
        command = var.cmd
      }
    }
  }
}
`;

test("jobs/parse answers the job's JSON; Variables fill variables; Canonicalize fills the defaults", async (t) => {
  const base = await startServer(t);
  const parsed = await http(base, "PUT", "/v1/jobs/parse", { JobHCL: SPEC, Variables: 'cmd = "/bin/web"' });
  assert.equal(parsed.status, 200, parsed.text);
  decodeGo(parsed.json, "Job");
  assert.equal(parsed.json.ID, "web-app");
  assert.equal(parsed.json.TaskGroups[0].Tasks[0].Config.command, "/bin/web");
  assert.equal(parsed.json.Region, undefined, "not canonicalized unless asked");
  assert.equal(parsed.json.TaskGroups[0].RestartPolicy, null);
  const canon = await http(base, "POST", "/v1/jobs/parse", {
    JobHCL: SPEC,
    Variables: 'cmd = "/bin/web"',
    Canonicalize: true,
  });
  assert.equal(canon.status, 200, canon.text);
  decodeGo(canon.json, "Job");
  assert.deepEqual([canon.json.Type, canon.json.Priority, canon.json.Region], ["service", 50, "global"]);
  assert.equal(
    canon.json.TaskGroups[0].RestartPolicy.Attempts,
    2,
    "the service default, as a register stores it",
  );
  const listed = await http(base, "GET", "/v1/jobs");
  assert.deepEqual(listed.json, [], "parsing registers nothing");
});

test("jobs/parse refuses an empty spec, bad HCL, a missing variable and file functions (400)", async (t) => {
  const base = await startServer(t);
  const empty = await http(base, "PUT", "/v1/jobs/parse", { JobHCL: "" });
  assert.deepEqual([empty.status, empty.text.trim()], [400, "Job spec is empty"]);
  const bad = await http(base, "PUT", "/v1/jobs/parse", { JobHCL: 'job "x" {\n  group "g" {\n' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /^Failed to parse job: .*input\.hcl/);
  const noVar = await http(base, "PUT", "/v1/jobs/parse", { JobHCL: SPEC });
  assert.equal(noVar.status, 400);
  assert.match(noVar.text, /^Failed to parse job: .*cmd/);
  const readsFile = await http(base, "PUT", "/v1/jobs/parse", {
    JobHCL:
      'job "f" {\n  meta {\n    k = file("/etc/hostname")\n  }\n  group "g" {\n    task "t" {\n      driver = "exec"\n    }\n  }\n}\n',
  });
  assert.equal(readsFile.status, 400, readsFile.text);
  assert.match(readsFile.text, /^Failed to parse job: /);
  const notString = await http(base, "PUT", "/v1/jobs/parse", { JobHCL: 5 });
  assert.equal(notString.status, 400);
});

test("search/fuzzy matches substrings by context with scopes, and refuses short text and unknown contexts", async (t) => {
  const base = await startServer(t);
  const job = (id: string, group: string, task: string, command: string) => ({
    Job: {
      ID: id,
      TaskGroups: [{ Name: group, Tasks: [{ Name: task, Driver: "raw_exec", Config: { command } }] }],
    },
  });
  assert.equal(
    (await http(base, "PUT", "/v1/jobs", job("web-app", "frontend", "webhook", "/bin/web"))).status,
    200,
  );
  assert.equal(
    (await http(base, "PUT", "/v1/jobs", job("db", "store", "pg", "/usr/bin/postgres"))).status,
    200,
  );
  const all = await http(base, "PUT", "/v1/search/fuzzy", { Text: "WEB", Context: "all" });
  assert.equal(all.status, 200, all.text);
  decodeGo(all.json, "FuzzySearchResponse");
  assert.deepEqual(all.json.Matches.jobs, [{ ID: "web-app", Scope: ["default"] }]);
  assert.deepEqual(all.json.Matches.tasks, [{ ID: "webhook", Scope: ["default", "web-app", "frontend"] }]);
  assert.deepEqual(all.json.Matches.commands, [
    { ID: "/bin/web", Scope: ["default", "web-app", "frontend", "webhook"] },
  ]);
  assert.equal(all.json.Matches.groups, undefined, "no group matched");
  assert.equal(all.json.Truncations.jobs, false);
  assert.equal(all.json.Truncations.nodes, false);
  assert.ok(all.index !== null, "X-Nomad-Index is set");
  const groups = await http(base, "PUT", "/v1/search/fuzzy", { Text: "tor", Context: "jobs" });
  assert.deepEqual(groups.json.Matches, { groups: [{ ID: "store", Scope: ["default", "db"] }] });
  const short = await http(base, "PUT", "/v1/search/fuzzy", { Text: "w", Context: "all" });
  assert.equal(short.status, 400);
  assert.match(short.text, /at least 2 characters, got 1/);
  const bogus = await http(base, "PUT", "/v1/search/fuzzy", { Text: "web", Context: "bogus" });
  assert.equal(bogus.status, 400);
});
