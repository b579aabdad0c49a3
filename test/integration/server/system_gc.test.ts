/**
 * `berth system gc` (Nomad's force GC) on an in-process server with ACLs on: a stopped job whose
 * allocs and evals are all done goes with its evaluations at once, though the job threshold (4 h)
 * has not passed; a live job stays; the periodic pass alone (default thresholds) had kept it. Only a
 * management token may ask; `system reconcile summaries` is accepted and changes nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { runCli } from "../../helpers/agent_process.js";
import { http } from "./fake_agent.js";

function job(id: string) {
  return { ID: id, TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec" }] }] };
}

test("system gc: a stopped job and its evaluations go at once, a live job stays; management only", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    acl: { enabled: true },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const root = (await http(base, "PUT", "/v1/acl/bootstrap")).json.SecretID as string;
  const as = (secret: string) => ({ "X-Nomad-Token": secret });
  const call = (method: string, route: string, body?: unknown) => http(base, method, route, body, as(root));

  for (const id of ["old", "web"])
    assert.equal((await call("PUT", "/v1/jobs", { Job: job(id) })).status, 200);
  assert.equal((await call("DELETE", "/v1/job/old")).status, 200, "stopped, not purged");
  const oldEvals = (await call("GET", "/v1/job/old/evaluations")).json as { ID: string }[];
  assert.ok(oldEvals.length > 0);
  assert.equal((await call("GET", "/v1/job/old")).json.Status, "dead");

  // A token that may write jobs is not a management token.
  const policy = 'namespace "default" { policy = "write" }';
  assert.equal((await call("PUT", "/v1/acl/policy/writer", { Name: "writer", Rules: policy })).status, 200);
  const writer = (await call("PUT", "/v1/acl/token", { Type: "client", Policies: ["writer"] })).json
    .SecretID as string;
  const refused = await http(base, "PUT", "/v1/system/gc", undefined, as(writer));
  assert.equal(refused.status, 403, refused.text);
  assert.equal((await call("GET", "/v1/job/old")).status, 200, "a refused gc removed nothing");

  const cli = await runCli(["system", "gc"], { BERTH_ADDR: base, BERTH_TOKEN: root, NOMAD_ADDR: "" });
  assert.deepEqual([cli.code, cli.stdout, cli.stderr], [0, "", ""], "silent on success, as Nomad's");
  assert.equal((await call("GET", "/v1/job/old")).status, 404, "the stopped job is gone");
  for (const e of oldEvals) assert.equal((await call("GET", `/v1/evaluation/${e.ID}`)).status, 404);
  assert.equal((await call("GET", "/v1/job/web")).status, 200, "the live job stays");

  const summaries = await runCli(["system", "reconcile", "summaries"], {
    BERTH_ADDR: base,
    BERTH_TOKEN: root,
    NOMAD_ADDR: "",
  });
  assert.equal(summaries.code, 0, summaries.stderr);
  const anonymous = await runCli(["system", "gc"], {
    BERTH_ADDR: base,
    BERTH_TOKEN: "",
    NOMAD_ADDR: "",
    NOMAD_TOKEN: "",
  });
  assert.equal(anonymous.code, 1);
  assert.match(anonymous.stderr, /^Error running system garbage-collection: .*Permission denied/);
});
