/**
 * Jobspecs over the HTTP API (in-process Server on loopback, real HTTP, in-memory SQLite): each HCL
 * fixture decoded, PUT to /v1/jobs, read back with GET /v1/job/:id — every stanza is there, kept ones
 * verbatim — and PUT again as read (what `nomad job inspect | nomad job run -` does) registers the
 * same job with no new version. Unknown fields answer 400 naming the field with nothing stored;
 * kept stanzas answer Nomad-style warnings; PUT /v1/job/:id refuses a body for another job.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { parseJobSpec } from "../../../src/api/index.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { http, startServer } from "./fake_agent.js";

const fixture = async (name: string) =>
  parseJobSpec(
    name,
    await readFile(new URL(`../../../../test/fixtures/jobs/${name}`, import.meta.url), "utf8"),
  );

/** The stored job without what the server sets at registration. */
function spec(job: Record<string, unknown>): Record<string, unknown> {
  const {
    SubmitTime: _s,
    CreateIndex: _c,
    ModifyIndex: _m,
    JobModifyIndex: _j,
    Version: _v,
    Status: _st,
    ...rest
  } = job;
  return rest;
}

test("HCL → PUT /v1/jobs → GET /v1/job/:id keeps every stanza; PUT of what GET answered changes nothing", async (t) => {
  const base = await startServer(t);
  // The fixtures with constraints every berth version takes (placement.nomad.hcl's operators are
  // the constraint slice's).
  for (const name of ["csi-node-plugin.nomad.hcl", "web-app.nomad.hcl", "kept.nomad.hcl"]) {
    const job = await fixture(name);
    const put = await http(base, "PUT", "/v1/jobs", { Job: job });
    assert.equal(put.status, 200, `${name}: ${put.text}`);
    const got = await http(base, "GET", `/v1/job/${job.ID}`);
    assert.equal(got.status, 200);
    assert.deepEqual(spec(got.json), spec(JSON.parse(JSON.stringify(validateJob(job)))), name);
    const again = await http(base, "PUT", `/v1/job/${job.ID}`, { Job: got.json });
    assert.equal(again.status, 200, again.text);
    const after = await http(base, "GET", `/v1/job/${job.ID}`);
    assert.equal(after.json.Version, got.json.Version, `${name}: the same spec is not a new version`);
    assert.deepEqual(after.json, got.json);
  }
});

test("register answers warnings for kept stanzas, none for a job without", async (t) => {
  const base = await startServer(t);
  const web = await http(base, "PUT", "/v1/jobs", { Job: await fixture("web-app.nomad.hcl") });
  assert.equal(web.status, 200);
  assert.equal(
    web.json.Warnings,
    [
      "4 warnings:\n",
      '* Task group "web" service "web": berth does not register services; the stanza is kept and ignored',
      '* Task group "web" network: berth does not set up group networks or allocate ports; the stanza is kept and ignored',
      '* Task "server" in group "web" vault: berth does not fetch Vault tokens; the stanza is kept and ignored',
      '* Task "server" in group "web" artifact: berth does not download artifacts; the stanza is kept and ignored',
    ].join("\n"),
  );
  const plain = await http(base, "PUT", "/v1/jobs", {
    Job: { ID: "plain", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] },
  });
  assert.equal(plain.json.Warnings, "");
});

test("validate and plan answer the warnings register does", async (t) => {
  const base = await startServer(t);
  const job = await fixture("web-app.nomad.hcl");
  const validated = await http(base, "PUT", "/v1/validate/job", { Job: job });
  const planned = await http(base, "PUT", `/v1/job/${job.ID}/plan`, { Job: job });
  const registered = await http(base, "PUT", "/v1/jobs", { Job: job });
  assert.match(registered.json.Warnings, /^4 warnings:/);
  assert.equal(validated.json.Warnings, registered.json.Warnings);
  assert.equal(planned.json.Warnings, registered.json.Warnings);
});

test("an unknown field is a 400 naming it, and nothing is stored", async (t) => {
  const base = await startServer(t);
  const body = {
    Job: { ID: "typo", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Drvier: "exec", Driver: "exec" }] }] },
  };
  const res = await fetch(`${base}/v1/jobs`, { method: "PUT", body: JSON.stringify(body) });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("x-berth-error-code"), "ERR_VALIDATION");
  assert.match(await res.text(), /Job\.TaskGroups\[0\]\.Tasks\[0\]\.Drvier: unknown field/);
  assert.equal((await http(base, "GET", "/v1/job/typo")).status, 404);
  assert.deepEqual((await http(base, "GET", "/v1/jobs")).json, []);
});

test("PUT /v1/job/:id refuses a body for another job", async (t) => {
  const base = await startServer(t);
  const res = await http(base, "PUT", "/v1/job/other", {
    Job: { ID: "mine", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] },
  });
  assert.equal(res.status, 400);
  assert.match(res.text, /Job ID does not match name/);
  assert.deepEqual((await http(base, "GET", "/v1/jobs")).json, []);
});
