/**
 * ACL checks that follow an object to its namespace (real server in-process, real HTTP and
 * WebSocket on loopback, a node agent's RPC connection): an alloc's read, stop, logs and exec
 * are checked against the alloc's namespace with read-job, alloc-lifecycle, read-logs and
 * alloc-exec; a node's allocations are filtered to the namespaces the token may read.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebSocket } from "ws";
import { nullLogger } from "../../../src/internal/log.js";
import { routeRequirements } from "../../../src/server/http/api.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http } from "./fake_agent.js";

/** The HTTP status a WebSocket upgrade is answered with (101 when it is taken). */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once("open", () => {
      resolve(101);
      ws.terminate();
    });
    ws.once("error", reject);
  });
}

test("alloc routes are checked in the alloc's namespace; node allocations are filtered", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    acl: { enabled: true },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const call = (secret: string | undefined, method: string, route: string, body?: unknown) =>
    http(base, method, route, body, secret === undefined ? {} : { "X-Nomad-Token": secret });

  const root = (await call(undefined, "PUT", "/v1/acl/bootstrap")).json.SecretID as string;
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", { Node: makeNode("n1") });
  const job = { ID: "web", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] };
  assert.equal((await call(root, "PUT", "/v1/jobs", { Job: job })).status, 200);
  const allocs = await call(root, "GET", "/v1/job/web/allocations");
  const allocId = (allocs.json as { ID: string }[])[0]!.ID;

  const token = async (name: string, rules: string) => {
    await call(root, "PUT", `/v1/acl/policy/${name}`, { Name: name, Rules: rules });
    return (await call(root, "PUT", "/v1/acl/token", { Type: "client", Policies: [name] })).json
      .SecretID as string;
  };
  const reader = await token("reader", 'namespace "default" { policy = "read" }\nnode { policy = "read" }');
  const elsewhere = await token("elsewhere", 'namespace "x" { policy = "write" }\nnode { policy = "read" }');
  const operator = await token("operator", 'namespace "default" { policy = "write" }');

  assert.equal((await call(reader, "GET", `/v1/allocation/${allocId}`)).status, 200);
  assert.equal((await call(elsewhere, "GET", `/v1/allocation/${allocId}`)).status, 403);
  assert.equal((await call(reader, "PUT", `/v1/allocation/${allocId}/stop`)).status, 403);
  assert.equal((await call(reader, "PUT", `/v1/client/allocation/${allocId}/restart`, {})).status, 403);
  assert.equal((await call(reader, "GET", `/v1/client/fs/logs/${allocId}?task=t&type=stdout`)).status, 403);

  const exec = (secret: string) =>
    upgradeStatus(
      `${base.replace("http://", "ws://")}/v1/client/allocation/${allocId}/exec?task=t&command=${encodeURIComponent('["id"]')}`,
      { "X-Nomad-Token": secret },
    );
  assert.equal(await exec(reader), 403);
  // alloc-exec is allowed: the request gets past the ACL (here the node is a fake, so what comes
  // next is not the point; only that it is not 403).
  assert.notEqual(await exec(operator), 403);

  // A node's allocations: node read lets the route answer; the allocs are those the token may read.
  assert.deepEqual(
    ((await call(reader, "GET", "/v1/node/n1/allocations")).json as { ID: string }[]).map((a) => a.ID),
    [allocId],
  );
  const filtered = await call(elsewhere, "GET", "/v1/node/n1/allocations");
  assert.equal(filtered.status, 200);
  assert.deepEqual(filtered.json, []);
  assert.equal((await call(operator, "GET", "/v1/node/n1/allocations")).status, 403, "no node rule");

  // Anonymous: every route but the ACL system's own answers 403, whatever the body (an object's
  // routes are asked with real IDs: a missing object answers its 404 before any ACL, as Nomad's).
  const evalId = ((await call(root, "GET", "/v1/job/web/evaluations")).json as { ID: string }[])[0]!.ID;
  const deployments = (await call(root, "GET", "/v1/deployments")).json as { ID: string }[];
  const ids: Record<string, string> = { alloc: allocId, eval: evalId, deployment: deployments[0]?.ID ?? "" };
  let asked = 0;
  for (const r of routeRequirements()) {
    if (r.path.startsWith("/v1/acl/")) continue;
    // Nomad answers these to anyone: the namespaces list filtered to what the caller may use (empty
    // for anonymous), and the name-less namespace path's 400.
    if (r.needs.startsWith("any token") || r.needs.startsWith("none (")) continue;
    const kind = /^namespace of the (alloc|eval|deployment)/.exec(r.needs)?.[1];
    if (kind === "deployment" && ids.deployment === "") continue; // this job made none
    const id = kind ? ids[kind]! : r.path.startsWith("/v1/node/") ? "n1" : "web";
    const route = r.path.replace(":id", id).replace(":table", "jobs").replace(":key", "web");
    for (const method of r.methods) {
      const res = await call(
        undefined,
        method,
        `${route}?type=csi`,
        method === "GET" || method === "DELETE" ? undefined : {},
      );
      assert.equal(res.status, 403, `anonymous ${method} ${route}: ${res.status} ${res.text}`);
      asked++;
    }
  }
  assert.ok(asked > 60, `${asked} routes asked`);

  // alloc-lifecycle: the stop goes through.
  assert.equal((await call(operator, "PUT", `/v1/allocation/${allocId}/stop`)).status, 200);
});
