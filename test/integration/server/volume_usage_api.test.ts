/**
 * Volume usage over the real agent RPC and HTTP API (issue 15), against an in-process server: a
 * node agent's CSIVolume.UpdateUsage lands on the volume its alloc claims; the connection binds the
 * node (another NodeID is refused); `GET /v1/volume/csi/:id` answers `Usage` only with
 * `?usage=true` (null before any report), so Nomad's clients keep Nomad's shape; a bad flag is a
 * 400 naming it; the volume's secrets never show in the plugin's message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer } from "./fake_agent.js";

const MiB = 1024 * 1024;

test("a node's volume usage shows on the volume with ?usage=true only", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => ({
      ExternalVolumeID: `ext-${p.Name}`,
      CapacityBytes: 10 * MiB,
      VolumeContext: {},
      Topologies: [],
    }),
    "ClientCSI.ControllerPublishVolume": async () => ({ PublishContext: {} }),
    "ClientCSI.ControllerValidateVolume": async () => ({}),
  });
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: { p1: controllerInfo("p1", true) },
      CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }, { ID: "ext-n1" }) },
    }),
  });
  const created = await http(base, "PUT", "/v1/volume/csi/vol1/create", {
    Volumes: [
      {
        ID: "vol1",
        PluginID: "p1",
        RequestedCapacityMin: 10 * MiB,
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
        Secrets: { password: "hunter2-secret" },
      },
    ],
  });
  assert.equal(created.status, 200, created.text);
  const job = await http(base, "PUT", "/v1/jobs", {
    Job: {
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
    },
  });
  assert.equal(job.status, 200, job.text);
  const allocs = await http(base, "GET", "/v1/job/web/allocations");
  const allocId: string = allocs.json[0].ID;

  const report = {
    VolumeID: "vol1",
    Namespace: "default",
    BytesUsed: 5 * MiB,
    BytesAvailable: 5 * MiB,
    BytesTotal: 10 * MiB,
    InodesUsed: 2,
    InodesAvailable: 100,
    InodesTotal: 102,
    Abnormal: true,
    Message: "cannot reach it with hunter2-secret",
  };
  // Not claimed yet: nothing recorded.
  const early = await peer.call("CSIVolume.UpdateUsage", { NodeID: "n1", Volumes: [report] });
  assert.deepEqual([early.Recorded, early.Refused], [0, ["default/vol1"]]);
  const none = await http(base, "GET", "/v1/volume/csi/vol1?usage=true");
  assert.equal(none.json.Usage, null, "null until a node reported");

  await peer.call("CSIVolume.Claim", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  await assert.rejects(
    peer.call("CSIVolume.UpdateUsage", { NodeID: "n2", Volumes: [report] }),
    /belongs to node n1/,
    "the connection's node only",
  );
  const ok = await peer.call("CSIVolume.UpdateUsage", { NodeID: "n1", Volumes: [report] });
  assert.deepEqual([ok.Recorded, ok.Refused], [1, []]);

  const plain = await http(base, "GET", "/v1/volume/csi/vol1");
  assert.equal(plain.status, 200);
  assert.equal("Usage" in plain.json, false, "Nomad's shape without ?usage=true");
  const withUsage = await http(base, "GET", "/v1/volume/csi/vol1?usage=true&claims=true");
  const u = withUsage.json.Usage;
  assert.deepEqual(
    [u.NodeID, u.BytesUsed, u.BytesTotal, u.InodesUsed, u.Abnormal],
    ["n1", 5 * MiB, 10 * MiB, 2, true],
  );
  assert.equal(u.Message, "cannot reach it with [REDACTED]");
  assert.ok(u.UpdateTime > 0);
  assert.ok(!withUsage.text.includes("hunter2-secret"), "no secret in the answer");
  const list = await http(base, "GET", "/v1/volumes?type=csi");
  assert.equal("Usage" in list.json[0], false, "the list stays Nomad's stub");

  const bad = await fetch(`${base}/v1/volume/csi/vol1?usage=maybe`);
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get("x-berth-error-code"), "ERR_VALIDATION");
  assert.match(await bad.text(), /usage/);
});
