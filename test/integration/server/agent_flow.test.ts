import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer, type Call } from "./fake_agent.js";

/** A fake node agent whose controller records every call it gets. */
async function recordingAgent(base: string) {
  const calls: Call[] = [];
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      calls.push({ method: "create", params: p });
      return {
        ExternalVolumeID: `ext-${p.Name}`,
        CapacityBytes: p.CapacityMin || 1024,
        VolumeContext: { path: "/srv/x" },
        Topologies: [],
      };
    },
    "ClientCSI.ControllerPublishVolume": async (p) => {
      calls.push({ method: "publish", params: p });
      return { PublishContext: { device: "/dev/fake0" } };
    },
    "ClientCSI.ControllerUnpublishVolume": async (p) => {
      calls.push({ method: "unpublish", params: p });
      return {};
    },
    "ClientCSI.ControllerValidateVolume": async (p) => {
      calls.push({ method: "validate", params: p });
      return {};
    },
    "ClientCSI.ControllerDeleteVolume": async (p) => {
      calls.push({ method: "delete", params: p });
      return {};
    },
  });
  return { peer, calls };
}

const volSpec = {
  ID: "vol1",
  Name: "vol1",
  PluginID: "p1",
  RequestedCapacityMin: 2048,
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  Secrets: { password: "hunter2" },
  MountOptions: { FSType: "ext4", MountFlags: ["pw=hunter2"] },
};

const jobSpec = {
  ID: "web",
  TaskGroups: [
    {
      Name: "g",
      Volumes: {
        data: {
          Type: "csi",
          Source: "vol1",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
        },
      },
      Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
    },
  ],
};

test("node agent → plugin health → create → place → claim → unpublish → freed", async (t) => {
  const base = await startServer(t);
  const { peer, calls } = await recordingAgent(base);
  t.after(() => peer.close());

  // Calls before Node.Register are refused: the connection is not bound to a node yet.
  await assert.rejects(peer.call("Node.Heartbeat", { NodeID: "n1" }), /Node.Register first/);

  const node = makeNode("n1", {
    CSIControllerPlugins: { p1: controllerInfo("p1", true) },
    CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }, { ID: "ext-n1" }) },
  });
  const reg = await peer.call("Node.Register", { Node: node });
  assert.equal(reg.HeartbeatTTL, 60_000);

  const plugin = await http(base, "GET", "/v1/plugin/csi/p1");
  assert.equal(plugin.status, 200);
  // Expected counts what the jobs that declare the plugin expect; this agent reports the plugin
  // without any job, so nothing is expected (plugin_expected.test.ts covers the jobs' counts).
  assert.deepEqual(
    [
      plugin.json.ControllersHealthy,
      plugin.json.ControllersExpected,
      plugin.json.NodesHealthy,
      plugin.json.NodesExpected,
      plugin.json.ControllerRequired,
    ],
    [1, 0, 1, 0, true],
  );
  const plugins = await http(base, "GET", "/v1/plugins?type=csi");
  assert.equal(plugins.json[0].ID, "p1");

  const created = await http(base, "PUT", "/v1/volume/csi/vol1/create", { Volumes: [volSpec] });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.json.Volumes[0].ExternalID, "ext-vol1");
  assert.equal(created.json.Volumes[0].Secrets, null);
  assert.ok(!created.text.includes("hunter2"), "secrets never reach the API");
  const createCall = calls.find((c) => c.method === "create");
  assert.equal(createCall?.params.CapacityMin, 2048);
  assert.deepEqual(createCall?.params.Secrets, { password: "hunter2" }, "the plugin gets the secrets");

  const again = await http(base, "PUT", "/v1/volume/csi/vol1/create", { Volumes: [volSpec] });
  assert.equal(again.status, 200);
  assert.equal(
    calls.filter((c) => c.method === "create").length,
    1,
    "creating an existing volume is idempotent",
  );

  const reg2 = await http(base, "PUT", "/v1/jobs", { Job: jobSpec });
  assert.equal(reg2.status, 200, reg2.text);
  assert.ok(reg2.json.EvalID);
  const allocs = await http(base, "GET", "/v1/job/web/allocations");
  assert.equal(allocs.json.length, 1);
  assert.equal(allocs.json[0].NodeID, "n1");
  const allocId: string = allocs.json[0].ID;

  const mine = await peer.call("Node.GetAllocs", { NodeID: "n1", MinIndex: 0, WaitMs: 0 });
  assert.deepEqual(
    mine.Allocs.map((a) => a.ID),
    [allocId],
  );

  const claim = await peer.call("CSIVolume.Claim", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  assert.deepEqual(claim.PublishContext, { device: "/dev/fake0" });
  assert.deepEqual(
    claim.Volume.Secrets,
    { password: "hunter2" },
    "node-internal claim answer carries secrets",
  );
  assert.equal(claim.Volume.Context.path, "/srv/x");
  const publish = calls.find((c) => c.method === "publish");
  assert.equal(publish?.params.ExternalNodeID, "ext-n1");
  assert.equal(publish?.params.ExternalVolumeID, "ext-vol1");

  const vol = await http(base, "GET", "/v1/volume/csi/vol1?claims=true");
  assert.deepEqual(vol.json.WriteAllocs, { [allocId]: null });
  assert.equal(vol.json.Allocations[0].ID, allocId);
  assert.equal(vol.json.Secrets, null);
  assert.deepEqual(vol.json.MountOptions.MountFlags, ["[REDACTED]"]);
  assert.ok(!vol.text.includes("hunter2"));
  const stubs = await http(base, "GET", "/v1/volumes?type=csi&plugin_id=p1");
  assert.equal(stubs.json[0].CurrentWriters, 1);
  assert.equal(stubs.json[0].Schedulable, true);

  const refused = await http(base, "DELETE", "/v1/volume/csi/vol1");
  assert.equal(refused.status, 409, "deregister refused while claimed");

  await assert.rejects(
    peer.call("CSIVolume.Unpublish", {
      VolumeID: "vol1",
      Namespace: "default",
      AllocationID: allocId,
      NodeID: "n1",
      State: "taken",
    }),
    /node-detached/,
  );
  await peer.call("CSIVolume.Unpublish", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    State: "node-detached",
  });
  assert.equal(calls.filter((c) => c.method === "unpublish").length, 1);
  const freed = await http(base, "GET", "/v1/volume/csi/vol1?claims=true");
  assert.deepEqual([freed.json.ReadAllocs, freed.json.WriteAllocs, freed.json.PastClaims], [{}, {}, {}]);
  await peer.call("CSIVolume.Unpublish", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    State: "node-detached",
  });
  assert.equal(calls.filter((c) => c.method === "unpublish").length, 1, "unpublish is idempotent");

  const del = await http(base, "DELETE", "/v1/volume/csi/vol1/delete", undefined, {
    "X-Nomad-CSI-Secrets": "token=abc",
  });
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(calls.find((c) => c.method === "delete")?.params.Secrets, {
    password: "hunter2",
    token: "abc",
  });
  assert.equal((await http(base, "GET", "/v1/volume/csi/vol1?claims=true")).status, 404);
});

test("HTTP: bad specs answer 4xx naming the field and change nothing; blocking queries", async (t) => {
  const server = new Server({ dataDir: null, httpAddr: "127.0.0.1:0", log: nullLogger });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const { peer } = await recordingAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  const before = (await http(base, "GET", "/v1/volumes?type=csi")).index;

  const badMode = await http(base, "PUT", "/v1/volume/csi/v1", {
    Volumes: [
      {
        ID: "v1",
        PluginID: "p1",
        ExternalID: "e",
        RequestedCapabilities: [{ AccessMode: "foo", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(badMode.status, 400);
  assert.match(
    badMode.text,
    /^Volumes\[0\]\.RequestedCapabilities\[0\]\.AccessMode: unknown access mode "foo"/,
  );
  const escape = await http(base, "PUT", "/v1/volume/csi/x", {
    Volumes: [{ ID: "../../etc", PluginID: "p1", ExternalID: "e", RequestedCapabilities: [] }],
  });
  assert.equal(escape.status, 400);
  assert.match(escape.text, /Volumes\[0\]\.ID/);
  const noId = await http(base, "PUT", "/v1/volume/csi/", {
    Volumes: [{ PluginID: "p1", ExternalID: "e", RequestedCapabilities: [] }],
  });
  assert.equal(noId.status, 400, "a volume without an ID is refused by validation, not a missing route");
  assert.match(noId.text, /Volumes\[0\]\.ID: is required/);
  const badJson = await http(base, "PUT", "/v1/volume/csi/v1", "{nope");
  assert.equal(badJson.status, 400);
  assert.match(badJson.text, /invalid JSON/);
  assert.ok(!/at .*\.js/.test(badJson.text), "no stack trace");
  const noPlugin = await http(base, "PUT", "/v1/volume/csi/v2", {
    Volumes: [
      {
        ID: "v2",
        PluginID: "nope",
        ExternalID: "e",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
      },
    ],
  });
  assert.equal(noPlugin.status, 400);
  assert.match(noPlugin.text, /PluginID/);
  const badJob = await http(base, "PUT", "/v1/jobs", {
    Job: { ID: "j", TaskGroups: [{ Name: "g", Count: "x", Tasks: [{ Name: "t", Driver: "exec" }] }] },
  });
  assert.equal(badJob.status, 400);
  assert.match(badJob.text, /Job\.TaskGroups\[0\]\.Count/);
  // A count past any cluster is refused before it is stored (it used to crash every server start).
  const poisoned = await http(base, "PUT", "/v1/jobs", {
    Job: { ID: "poison", TaskGroups: [{ Name: "g", Count: 1e300, Tasks: [{ Name: "t", Driver: "exec" }] }] },
  });
  assert.equal(poisoned.status, 400);
  assert.match(poisoned.text, /Job\.TaskGroups\[0\]\.Count: must be at most 10000/);
  assert.equal((await http(base, "GET", "/v1/job/poison")).status, 404, "nothing was stored");
  assert.equal(
    (await http(base, "GET", "/v1/volumes?type=csi")).index,
    before,
    "refused requests changed nothing",
  );
  assert.deepEqual((await http(base, "GET", "/v1/volumes?type=csi")).json, []);
  assert.equal((await http(base, "GET", "/v1/job/nope")).status, 404);
  assert.equal((await http(base, "GET", "/v1/nowhere")).status, 404);

  const idx = Number((await http(base, "GET", "/v1/volumes?type=csi")).index);
  const waiting = http(base, "GET", `/v1/volumes?type=csi&index=${idx}&wait=5s`);
  const reg = await http(base, "PUT", "/v1/volume/csi/v1", {
    Volumes: [
      {
        ID: "v1",
        PluginID: "p1",
        ExternalID: "e",
        Secrets: { s: "topsecret" },
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(reg.status, 200, reg.text);
  const woke = await waiting;
  assert.ok(Number(woke.index) > idx);
  assert.equal(woke.json[0].ID, "v1");
  const got = await http(base, "GET", "/v1/volume/csi/v1?claims=true");
  assert.equal(got.json.Secrets, null);
  assert.ok(!got.text.includes("topsecret"));
});
