/**
 * ACLs on a real server (in-process, real HTTP on loopback, a real SQLite file, a node agent's RPC
 * connection): anonymous callers get 403 on guarded routes; the bootstrap works once; a token
 * with csi-read-volume in namespace `a` reads a's volumes only, cannot list b's, and a token with
 * csi-write-volume in `a` cannot create or register a volume whose body names `b`
 * (CVE-2024-10975); csi-mount-volume is needed to submit a job that claims a volume; token
 * secrets are stored only as hashes and shown only by the answer that created them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http } from "./fake_agent.js";

const capabilities = [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }];
const volume = (id: string, ns: string) => ({
  ID: id,
  Namespace: ns,
  PluginID: "p1",
  ExternalID: `ext-${id}`,
  RequestedCapabilities: capabilities,
});

const csiJob = (id: string) => ({
  ID: id,
  TaskGroups: [
    {
      Name: "g",
      Volumes: {
        data: { Type: "csi", Source: "va", AccessMode: "single-node-writer", AttachmentMode: "file-system" },
      },
      Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
    },
  ],
});

test("ACLs on: bootstrap once, anonymous refused, namespace capabilities enforced on reads, lists and body namespaces", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-acl-"));
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    acl: { enabled: true },
  });
  await server.start();
  t.after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = server.httpAddress;
  const as = (secret: string) => ({ "X-Nomad-Token": secret });
  const call = (secret: string | undefined, method: string, route: string, body?: unknown) =>
    http(base, method, route, body, secret === undefined ? {} : as(secret));

  // Anonymous: every guarded route says no, in Nomad's words.
  for (const [method, route] of [
    ["GET", "/v1/jobs"],
    ["GET", "/v1/volumes?type=csi"],
    ["GET", "/v1/nodes"],
    ["GET", "/v1/plugins?type=csi"],
    ["GET", "/v1/operator/quarantine"],
    ["PUT", "/v1/volume/csi/x"],
  ] as const) {
    const res = await call(
      undefined,
      method,
      route,
      method === "PUT" ? { Volumes: [volume("x", "default")] } : undefined,
    );
    assert.equal(res.status, 403, `${method} ${route}: ${res.text}`);
    assert.equal(res.text, "Permission denied\n");
  }
  assert.equal(
    (await call("9d3c1d60-0000-4000-8000-000000000000", "GET", "/v1/jobs")).text,
    "ACL token not found\n",
  );

  // The bootstrap: once, a management token whose secret only this answer carries.
  const boot = await call(undefined, "PUT", "/v1/acl/bootstrap");
  assert.equal(boot.status, 200, boot.text);
  assert.equal(boot.json.Type, "management");
  assert.equal(boot.json.Name, "Bootstrap Token");
  const root = boot.json.SecretID as string;
  assert.match(root, /^[0-9a-f-]{36}$/);
  const again = await call(root, "PUT", "/v1/acl/bootstrap");
  assert.equal(again.status, 400);
  assert.match(again.text, /^ACL bootstrap already done \(reset index: \d+\)\n$/);
  const self = await call(root, "GET", "/v1/acl/token/self");
  assert.equal(self.json.AccessorID, boot.json.AccessorID);
  assert.equal(self.json.SecretID, "", "a stored token's secret is never answered again");

  // A node running plugin p1, and volumes in namespaces a and b (management may do anything).
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  for (const ns of ["a", "b"]) {
    const made = await call(root, "PUT", `/v1/namespace/${ns}`, { Name: ns });
    assert.equal(made.status, 200, made.text);
  }
  assert.equal((await call(undefined, "PUT", "/v1/namespace/c", { Name: "c" })).status, 403);
  for (const [id, ns] of [
    ["va", "a"],
    ["vb", "b"],
  ] as const) {
    const res = await call(root, "PUT", `/v1/volume/csi/${id}?namespace=${ns}`, {
      Volumes: [volume(id, ns)],
    });
    assert.equal(res.status, 200, res.text);
  }

  // Policies and tokens.
  const policy = async (name: string, rules: string) => {
    const res = await call(root, "PUT", `/v1/acl/policy/${name}`, {
      Name: name,
      Description: "",
      Rules: rules,
    });
    assert.equal(res.status, 200, res.text);
  };
  const token = async (...policies: string[]) => {
    const res = await call(root, "PUT", "/v1/acl/token", {
      Name: policies.join("+"),
      Type: "client",
      Policies: policies,
    });
    assert.equal(res.status, 200, res.text);
    return res.json.SecretID as string;
  };
  await policy("read-a", 'namespace "a" { capabilities = ["csi-read-volume"] }');
  await policy(
    "write-a",
    'namespace "a" { capabilities = ["csi-write-volume"] }\nplugin { policy = "read" }',
  );
  // Everything a CSI job needs but csi-mount-volume, so that alone is what "submit" lacks.
  await policy("submit", 'namespace "a" { capabilities = ["submit-job"] }\nplugin { policy = "read" }');
  await policy("mount", 'namespace "a" { capabilities = ["csi-mount-volume"] }\nplugin { policy = "read" }');
  const reader = await token("read-a");
  const writer = await token("write-a");
  const submitter = await token("submit");
  const mounter = await token("submit", "mount");

  // Namespaces: the list shows the ones a token may use; one it may not use is not even readable.
  const names = async (secret: string) =>
    ((await call(secret, "GET", "/v1/namespaces")).json as { Name: string }[]).map((n) => n.Name);
  assert.deepEqual(await names(reader), ["a"]);
  assert.deepEqual(await names(root), ["a", "b", "default"]);
  assert.equal((await call(reader, "GET", "/v1/namespace/a")).status, 200);
  assert.equal((await call(reader, "GET", "/v1/namespace/b")).status, 403);
  assert.equal((await call(reader, "DELETE", "/v1/namespace/a")).status, 403, "management only");

  // csi-read-volume in a: a's volumes, nothing of b's.
  assert.equal((await call(reader, "GET", "/v1/volume/csi/va?namespace=a")).status, 200);
  assert.equal((await call(reader, "GET", "/v1/volume/csi/vb?namespace=b")).status, 403);
  assert.equal((await call(reader, "GET", "/v1/volumes?type=csi&namespace=b")).status, 403);
  const all = await call(reader, "GET", "/v1/volumes?type=csi&namespace=*");
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(
    (all.json as { ID: string }[]).map((v) => v.ID),
    ["va"],
  );
  // The same list for management still shows both (the filtered answer is not the cached one).
  const allRoot = await call(root, "GET", "/v1/volumes?type=csi&namespace=*");
  assert.deepEqual(
    (allRoot.json as { ID: string }[]).map((v) => v.ID),
    ["va", "vb"],
  );
  assert.equal(
    (await call(reader, "PUT", "/v1/volume/csi/vx?namespace=a", { Volumes: [volume("vx", "a")] })).status,
    403,
  );

  // CVE-2024-10975: csi-write-volume in a, a body naming b, through the URL of a.
  for (const route of [
    "/v1/volume/csi/vx/create?namespace=a",
    "/v1/volume/csi/vx?namespace=a",
    "/v1/volumes?namespace=a",
  ]) {
    const res = await call(writer, "PUT", route, { Volumes: [volume("vx", "b")] });
    assert.equal(res.status, 403, `${route}: ${res.text}`);
  }
  assert.equal(
    (await call(root, "GET", "/v1/volume/csi/vx?namespace=b")).status,
    404,
    "nothing was written in b",
  );
  const inA = await call(writer, "PUT", "/v1/volume/csi/vx?namespace=a", { Volumes: [volume("vx", "a")] });
  assert.equal(inA.status, 200, inA.text);

  // A job claiming a CSI volume needs csi-mount-volume (and plugin read) besides submit-job.
  const job = { ...csiJob("web"), Namespace: "a" };
  const denied = await call(submitter, "PUT", "/v1/jobs", { Job: job });
  assert.equal(denied.status, 403, denied.text);
  assert.equal((await call(root, "GET", "/v1/job/web?namespace=a")).status, 404);
  const allowed = await call(mounter, "PUT", "/v1/jobs", { Job: job });
  assert.equal(allowed.status, 200, allowed.text);

  // A deleted token stops working at once.
  const list = await call(root, "GET", "/v1/acl/tokens");
  const readerStub = (list.json as { Name: string; AccessorID: string }[]).find((x) => x.Name === "read-a")!;
  assert.equal((await call(root, "DELETE", `/v1/acl/token/${readerStub.AccessorID}`)).status, 200);
  assert.equal((await call(reader, "GET", "/v1/volume/csi/va?namespace=a")).text, "ACL token not found\n");

  // Non-management tokens cannot manage ACLs.
  assert.equal((await call(writer, "GET", "/v1/acl/tokens")).status, 403);
  assert.equal((await call(writer, "PUT", "/v1/acl/policy/x", { Name: "x", Rules: "" })).status, 403);

  // Secrets at rest: no stored byte holds a secret, only hashes.
  await server.stop();
  const stored = readdirSync(dir)
    .filter((f) => f.startsWith("state.db"))
    .map((f) => readFileSync(path.join(dir, f)).toString("latin1"))
    .join("");
  for (const secret of [root, writer, submitter, mounter]) assert.equal(stored.includes(secret), false);
});

test("ACLs off: the routes answer as before and the ACL endpoints say ACL support is disabled", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  assert.equal((await http(base, "GET", "/v1/jobs")).status, 200);
  const boot = await http(base, "PUT", "/v1/acl/bootstrap");
  assert.equal(boot.status, 400);
  assert.equal(boot.text, "ACL support disabled\n");
  assert.equal(boot.code, "ERR_ACL_DISABLED", "a code clients and the UI can tell it by");
});
