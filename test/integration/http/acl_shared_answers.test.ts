/**
 * Shared list answers stay per token under ACL (issue 13): an in-process server with ACLs on
 * (real HTTP on loopback, a real SQLite file, a node agent's RPC connection reporting the plugin).
 * Several callers block on the same volume list over every namespace; one write wakes them and the
 * answer is built once per distinct view, so the tokens that may read only `a` or only `b` each
 * get their own namespaces at the same index, never another token's answer; a policy change is a
 * new view at once, although the volumes did not move.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http } from "../server/fake_agent.js";

const spec = (id: string, ns: string) => ({
  ID: id,
  Namespace: ns,
  PluginID: "p1",
  ExternalID: `ext-${id}`,
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
});

test("blocked callers of one volume list get one answer per token's view, never another token's", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-acl-shared-"));
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    acl: { enabled: true },
  });
  await server.start();
  const peer = await connectAgent(server.httpAddress);
  t.after(async () => {
    peer.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = server.httpAddress;
  const call = (secret: string, method: string, route: string, body?: unknown) =>
    http(base, method, route, body, { "X-Nomad-Token": secret });
  const ok = async (p: ReturnType<typeof call>) => {
    const res = await p;
    assert.equal(res.status, 200, res.text);
    return res;
  };

  const root = (await ok(http(base, "POST", "/v1/acl/bootstrap"))).json.SecretID as string;
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  for (const ns of ["a", "b"]) await ok(call(root, "PUT", `/v1/namespace/${ns}`, { Name: ns }));
  for (const [id, ns] of [
    ["va", "a"],
    ["vb", "b"],
  ] as const) {
    await ok(call(root, "PUT", `/v1/volume/csi/${id}?namespace=${ns}`, { Volumes: [spec(id, ns)] }));
  }
  const policy = (name: string, rules: string) =>
    ok(call(root, "PUT", `/v1/acl/policy/${name}`, { Name: name, Description: "", Rules: rules }));
  const token = async (p: string) =>
    (await ok(call(root, "PUT", "/v1/acl/token", { Name: p, Type: "client", Policies: [p] }))).json
      .SecretID as string;
  await policy("read-a", 'namespace "a" { capabilities = ["csi-read-volume"] }');
  await policy("read-b", 'namespace "b" { capabilities = ["csi-list-volume"] }');
  const ta = await token("read-a");
  const tb = await token("read-b");

  const route = "/v1/volumes?type=csi&namespace=*";
  const index = Number((await ok(call(root, "GET", route))).index);
  const callers = [ta, tb, root, ta, tb, root, tb, ta];
  const blocked = callers.map((secret) => ok(call(secret, "GET", `${route}&index=${index}&wait=60s`)));
  await ok(call(root, "PUT", "/v1/volume/csi/va2?namespace=a", { Volumes: [spec("va2", "a")] }));
  const answers = await Promise.all(blocked);

  const want = new Map([
    [ta, ["va", "va2"]],
    [tb, ["vb"]],
    [root, ["va", "va2", "vb"]],
  ]);
  const indexes = new Set<string | null>();
  answers.forEach((res, i) => {
    const secret = callers[i]!;
    assert.deepEqual(
      (res.json as { ID: string }[]).map((v) => v.ID),
      want.get(secret),
      `caller ${i} sees its own token's namespaces`,
    );
    indexes.add(res.index);
  });
  assert.equal(indexes.size, 1, "every caller is answered at the same index");
  assert.ok(Number([...indexes][0]) > index);

  // The same token after its policy changed sees the new view at once, at an unchanged volume index.
  await policy(
    "read-a",
    'namespace "a" { capabilities = ["csi-read-volume"] }\nnamespace "b" { capabilities = ["csi-read-volume"] }',
  );
  assert.deepEqual(
    ((await ok(call(ta, "GET", route))).json as { ID: string }[]).map((v) => v.ID),
    ["va", "va2", "vb"],
  );
  assert.deepEqual(
    ((await ok(call(tb, "GET", route))).json as { ID: string }[]).map((v) => v.ID),
    ["vb"],
  );
});
