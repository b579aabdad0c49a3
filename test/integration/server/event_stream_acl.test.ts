/**
 * The event stream with ACLs on (a real in-process server, real HTTP on loopback): Nomad's rules
 * per topic — a token may stream only topics its policies allow in every namespace it asks for,
 * else 403 before anything streams; all topics need a management token; and an open stream is
 * closed once its token is deleted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { http } from "./fake_agent.js";
import { endedWithin, eventFrames, hasEvent, openStream } from "./event_client.js";

test("ACLs: per-topic rules and namespaces, management for all topics; deleting the token closes its stream", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    acl: { enabled: true },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const as = (secret: string) => ({ "X-Nomad-Token": secret });
  const root = (await http(base, "PUT", "/v1/acl/bootstrap")).json.SecretID as string;
  assert.equal((await http(base, "PUT", "/v1/namespace/b", { Name: "b" }, as(root))).status, 200);
  const policy = await http(
    base,
    "PUT",
    "/v1/acl/policy/jobs",
    { Name: "jobs", Description: "", Rules: 'namespace "default" { capabilities = ["read-job"] }' },
    as(root),
  );
  assert.equal(policy.status, 200, policy.text);
  const made = await http(
    base,
    "PUT",
    "/v1/acl/token",
    { Name: "j", Type: "client", Policies: ["jobs"] },
    as(root),
  );
  const reader = made.json.SecretID as string;
  const accessor = made.json.AccessorID as string;

  const status = async (query: string, secret?: string) => {
    const s = await openStream(base, query, secret === undefined ? {} : as(secret));
    s.close();
    return s.status;
  };
  assert.equal(await status("?topic=Job"), 403, "anonymous");
  assert.equal(await status("?topic=Job", reader), 200);
  assert.equal(await status("?topic=Allocation&topic=Evaluation&topic=CSIPlugin", reader), 200);
  assert.equal(await status("?topic=CSIVolume", reader), 403, "needs csi-read-volume");
  assert.equal(await status("?topic=Node", reader), 403, "needs node read");
  assert.equal(await status("", reader), 403, "all topics need management");
  assert.equal(await status("?topic=Job&namespace=b", reader), 403, "not in namespace b");
  assert.equal(await status("?topic=Job&namespace=*", reader), 403, "`*` covers b too");
  assert.equal(await status("", root), 200);
  const denied = await http(base, "GET", "/v1/event/stream?topic=Node", undefined, as(reader));
  assert.equal(denied.text, "Permission denied\n");

  const s = await openStream(base, "?topic=Job", as(reader));
  t.after(() => s.close());
  const job = {
    ID: "web",
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
  };
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: job }, as(root))).status, 200);
  await s.waitFor(hasEvent("JobRegistered", "web"));
  assert.equal((await http(base, "DELETE", `/v1/acl/token/${accessor}`, undefined, as(root))).status, 200);
  await endedWithin(s);
  const before = eventFrames(s).length;
  assert.equal(
    (await http(base, "PUT", "/v1/jobs", { Job: { ...job, Meta: { v: "2" } } }, as(root))).status,
    200,
  );
  assert.equal(eventFrames(s).length, before, "nothing after the token is gone");
});

test("ACLs: a stream whose token expires ends before its next frame", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    acl: { enabled: true, tokenTtl: { minMs: 1 } },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const as = (secret: string) => ({ "X-Nomad-Token": secret });
  const root = (await http(base, "PUT", "/v1/acl/bootstrap")).json.SecretID as string;
  const rules = 'namespace "default" { capabilities = ["read-job"] }';
  await http(base, "PUT", "/v1/acl/policy/jobs", { Name: "jobs", Description: "", Rules: rules }, as(root));
  const made = await http(
    base,
    "PUT",
    "/v1/acl/token",
    { Name: "brief", Type: "client", Policies: ["jobs"], ExpirationTTL: "2s" },
    as(root),
  );
  assert.equal(made.status, 200, made.text);
  const s = await openStream(base, "?topic=Job", as(made.json.SecretID as string));
  // (opened at once: the token has two seconds to live)
  t.after(() => s.close());
  assert.equal(s.status, 200);
  // Once the server itself says the token has expired, the next event ends the stream.
  const secret = made.json.SecretID as string;
  while ((await http(base, "GET", "/v1/acl/token/self", undefined, as(secret))).status === 200) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const job = { ID: "late", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] };
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: job }, as(root))).status, 200);
  await endedWithin(s);
  assert.equal(eventFrames(s).length, 0);
});
