/**
 * Storage belongs to the namespace whose volume holds it (issue 30), with ACLs on: a token that may
 * write volumes in namespace `a` can neither register a second record on `b`'s external volume nor
 * list `b`'s external IDs through `/v1/volumes/external` (management can do both); and with
 * `telemetry { metrics_require_acl = true }` /v1/metrics needs `agent:read`. Real server over HTTP,
 * a fake node agent whose controller answers ListVolumes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http } from "./fake_agent.js";

const capabilities = [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }];
const volume = (id: string, ns: string, ext: string) => ({
  ID: id,
  Namespace: ns,
  PluginID: "p1",
  ExternalID: ext,
  RequestedCapabilities: capabilities,
});
const entry = (ExternalID: string) => ({
  ExternalID,
  CapacityBytes: 1,
  VolumeContext: {},
  CloneID: "",
  SnapshotID: "",
  PublishedExternalNodeIDs: [],
  IsAbnormal: false,
  Status: "",
});

test("ACLs on: another namespace's storage is neither registered again nor listed; metrics can require agent:read", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    acl: { enabled: true },
    telemetry: new Telemetry({ metricsRequireAcl: true }),
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const call = (secret: string | undefined, method: string, route: string, body?: unknown) =>
    http(base, method, route, body, secret === undefined ? {} : { "X-Nomad-Token": secret });
  const root = (await call(undefined, "PUT", "/v1/acl/bootstrap")).json.SecretID as string;

  const peer = await connectAgent(base, {
    "ClientCSI.ControllerListVolumes": async () => ({
      Entries: [entry("ext-a"), entry("ext-b"), entry("ext-unregistered")],
      NextToken: "",
    }),
  });
  t.after(() => peer.close());
  const ctl = controllerInfo("p1", false);
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: {
        p1: { ...ctl, ControllerInfo: { ...ctl.ControllerInfo!, SupportsListVolumes: true } },
      },
      CSINodePlugins: { p1: nodePluginInfo("p1") },
    }),
  });
  for (const ns of ["a", "b"])
    assert.equal((await call(root, "PUT", `/v1/namespace/${ns}`, { Name: ns })).status, 200);
  for (const [id, ns] of [
    ["va", "a"],
    ["vb", "b"],
  ] as const) {
    const res = await call(root, "PUT", `/v1/volume/csi/${id}?namespace=${ns}`, {
      Volumes: [volume(id, ns, `ext-${ns}`)],
    });
    assert.equal(res.status, 200, res.text);
  }
  const policy = await call(root, "PUT", "/v1/acl/policy/write-a", {
    Name: "write-a",
    Description: "",
    Rules:
      'namespace "a" { capabilities = ["csi-write-volume", "csi-list-volume"] }\nplugin { policy = "read" }',
  });
  assert.equal(policy.status, 200, policy.text);
  const writeA = (
    await call(root, "PUT", "/v1/acl/token", { Name: "a", Type: "client", Policies: ["write-a"] })
  ).json.SecretID as string;

  // Registering a record in `a` on b's storage: refused, and nothing stored.
  const stolen = await call(writeA, "PUT", "/v1/volume/csi/steal?namespace=a", {
    Volumes: [volume("steal", "a", "ext-b")],
  });
  assert.equal(stolen.status, 403, stolen.text);
  assert.match(stolen.text, /registered in another namespace/);
  assert.equal((await call(root, "GET", "/v1/volume/csi/steal?namespace=a")).status, 404);
  // Its own namespace's storage is fine; management may register anything.
  const own = await call(writeA, "PUT", "/v1/volume/csi/va2?namespace=a", {
    Volumes: [volume("va2", "a", "ext-a")],
  });
  assert.equal(own.status, 200, own.text);

  // The plugin's list: a's token sees a's storage only; management sees all of it.
  const listed = async (secret: string) =>
    (
      (await call(secret, "GET", "/v1/volumes/external?plugin_id=p1&namespace=a")).json.Volumes as {
        ExternalID: string;
      }[]
    )
      .map((v) => v.ExternalID)
      .sort();
  assert.deepEqual(await listed(writeA), ["ext-a"]);
  assert.deepEqual(await listed(root), ["ext-a", "ext-b", "ext-unregistered"]);
  const byRoot = await call(root, "PUT", "/v1/volume/csi/vb2?namespace=a", {
    Volumes: [volume("vb2", "a", "ext-b")],
  });
  assert.equal(byRoot.status, 200, byRoot.text);

  // Metrics: anonymous refused, agent:read allowed.
  assert.equal((await call(undefined, "GET", "/v1/metrics")).status, 403);
  await call(root, "PUT", "/v1/acl/policy/agent-read", {
    Name: "agent-read",
    Description: "",
    Rules: 'agent { policy = "read" }',
  });
  const scraper = (
    await call(root, "PUT", "/v1/acl/token", { Name: "s", Type: "client", Policies: ["agent-read"] })
  ).json.SecretID as string;
  assert.equal((await call(scraper, "GET", "/v1/metrics")).status, 200);
});
