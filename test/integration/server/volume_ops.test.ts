/**
 * Volume operations on an in-process server with a fake node agent on the RPC connection:
 * snapshots and the plugin's volume list in Nomad's shapes (secrets never answered, bad input a 4xx
 * naming the field), expansion (ControllerExpandVolume then NodeExpandVolume per claim; the new
 * capacity recorded only once the node step succeeded), `volume detach` and `deregister -force`
 * (refused while the alloc runs; otherwise the node step on the node, then the release walk).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BerthError } from "../../../src/structs/errors.js";
import type { CSIControllerInfo } from "../../../src/structs/plugin.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer, type AgentPeer, type Call } from "./fake_agent.js";

async function fakeAgent(base: string) {
  const calls: Call[] = [];
  const state = { failNodeExpand: false };
  const rec = (method: string, params: unknown) => calls.push({ method, params });
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      rec("create", p);
      return {
        ExternalVolumeID: `ext-${p.Name}`,
        CapacityBytes: p.CapacityMin,
        VolumeContext: {},
        Topologies: [],
      };
    },
    "ClientCSI.ControllerPublishVolume": async (p) => {
      rec("publish", p);
      return { PublishContext: {} };
    },
    "ClientCSI.ControllerUnpublishVolume": async (p) => (rec("unpublish", p), {}),
    "ClientCSI.ControllerDeleteVolume": async (p) => (rec("delete", p), {}),
    "ClientCSI.ControllerCreateSnapshot": async (p) => {
      rec("snapshot", p);
      return {
        ID: `snap-${p.Name}`,
        ExternalSourceVolumeID: p.ExternalSourceVolumeID,
        SizeBytes: 2048,
        CreateTime: 1_700_000_000,
        IsReady: true,
      };
    },
    "ClientCSI.ControllerDeleteSnapshot": async (p) => (rec("deleteSnapshot", p), {}),
    "ClientCSI.ControllerListSnapshots": async (p) => {
      rec("listSnapshots", p);
      return {
        Entries: [
          { ID: "snap-a", ExternalSourceVolumeID: "ext-vol1", SizeBytes: 1, CreateTime: 2, IsReady: true },
        ],
        NextToken: "",
      };
    },
    "ClientCSI.ControllerExpandVolume": async (p) => {
      rec("expand", p);
      return { CapacityBytes: p.CapacityMin, NodeExpansionRequired: true };
    },
    "ClientCSI.ControllerListVolumes": async (p) => {
      rec("listVolumes", p);
      return {
        Entries: [
          {
            ExternalID: "ext-vol1",
            CapacityBytes: 2048,
            VolumeContext: {},
            CloneID: "",
            SnapshotID: "",
            PublishedExternalNodeIDs: ["ext-n1"],
            IsAbnormal: false,
            Status: "",
          },
        ],
        NextToken: "",
      };
    },
    "ClientCSI.NodeExpandVolume": async (p) => {
      rec("nodeExpand", p);
      if (state.failNodeExpand)
        throw new BerthError("ERR_CSI_INTERNAL", "CSI NodeExpandVolume failed: INTERNAL: disk on fire");
      return { CapacityBytes: p.CapacityMin };
    },
    "ClientCSI.NodeDetachVolume": async (p) => (rec("nodeDetach", p), {}),
  });
  return { peer, calls, state };
}

const allCaps: Partial<CSIControllerInfo> = {
  SupportsCreateDeleteSnapshot: true,
  SupportsListSnapshots: true,
  SupportsExpand: true,
  // In-use volumes are expanded only through a plugin with ONLINE expansion (volume_reapply.ts).
  SupportsOnlineExpand: true,
  SupportsListVolumes: true,
};

const volSpec = (over: Record<string, unknown> = {}) => ({
  ID: "vol1",
  Name: "vol1",
  PluginID: "p1",
  RequestedCapacityMin: 2048,
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  Secrets: { password: "hunter2" },
  ...over,
});

const jobSpec = (id: string) => ({
  ID: id,
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
});

async function setup(t: { after(fn: () => unknown): void }) {
  const base = await startServer(t);
  const agent = await fakeAgent(base);
  t.after(() => agent.peer.close());
  const base1 = controllerInfo("p1", true);
  await agent.peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: {
        p1: { ...base1, ControllerInfo: { ...base1.ControllerInfo!, ...allCaps } },
        p2: controllerInfo("p2", false),
      },
      CSINodePlugins: {
        p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }, { ID: "ext-n1", SupportsExpand: true }),
      },
    }),
  });
  const created = await http(base, "PUT", "/v1/volume/csi/vol1/create", { Volumes: [volSpec()] });
  assert.equal(created.status, 200, created.text);
  return { base, ...agent };
}

/** Runs job `id` and claims vol1 for its alloc; answers the alloc ID. */
async function claimedAlloc(base: string, peer: AgentPeer, id: string): Promise<string> {
  const reg = await http(base, "PUT", "/v1/jobs", { Job: jobSpec(id) });
  assert.equal(reg.status, 200, reg.text);
  const allocs = await http(base, "GET", `/v1/job/${id}/allocations`);
  const allocId: string = allocs.json[0].ID;
  await peer.call("CSIVolume.Claim", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  return allocId;
}

async function setStatus(peer: AgentPeer, allocId: string, status: "running" | "complete") {
  await peer.call("Node.UpdateAllocs", {
    NodeID: "n1",
    Allocs: [{ ID: allocId, ClientStatus: status, ClientDescription: "", TaskStates: {} }],
  });
}

test("snapshots and the plugin's volume list: Nomad shapes, secrets never answered, bad input names the field", async (t) => {
  const { base, calls } = await setup(t);
  const made = await http(base, "PUT", "/v1/volumes/snapshot", {
    Snapshots: [
      { SourceVolumeID: "vol1", Name: "s1", Secrets: { token: "t0ps3cret" }, Parameters: { a: "b" } },
    ],
  });
  assert.equal(made.status, 200, made.text);
  const snap = made.json.Snapshots[0];
  assert.deepEqual(
    [
      snap.ID,
      snap.SourceVolumeID,
      snap.ExternalSourceVolumeID,
      snap.PluginID,
      snap.Name,
      snap.IsReady,
      snap.Secrets,
    ],
    ["snap-s1", "vol1", "ext-vol1", "p1", "s1", true, null],
  );
  assert.ok(!made.text.includes("t0ps3cret") && !made.text.includes("hunter2"), "secrets never answered");
  const call = calls.find((c) => c.method === "snapshot")!;
  assert.deepEqual(call.params.Secrets, { password: "hunter2", token: "t0ps3cret" }, "the plugin gets them");
  assert.deepEqual(call.params.Parameters, { a: "b" });

  const bad: [unknown, RegExp][] = [
    [{}, /^Snapshots: /],
    [{ Snapshots: [{}] }, /Snapshots\[0\]\.SourceVolumeID/],
    [{ Snapshots: [{ SourceVolumeID: "nope" }] }, /Snapshots\[0\]\.SourceVolumeID: no volume "nope"/],
    [{ Snapshots: [{ SourceVolumeID: "vol1", Secrets: { k: 42 } }] }, /Snapshots\[0\]\.Secrets/],
    [{ Snapshots: [{ SourceVolumeID: "vol1", Name: 7 }] }, /Snapshots\[0\]\.Name/],
  ];
  for (const [body, re] of bad) {
    const r = await http(base, "PUT", "/v1/volumes/snapshot", body);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, re);
  }
  assert.equal(calls.filter((c) => c.method === "snapshot").length, 1, "refused requests reach no plugin");

  const list = await http(
    base,
    "GET",
    "/v1/volumes/snapshot?plugin_id=p1&per_page=5&next_token=x",
    undefined,
    {
      "X-Nomad-CSI-Secrets": "token=abc",
    },
  );
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    (list.json.Snapshots as { ID: string }[]).map((s) => s.ID),
    ["snap-a"],
  );
  assert.equal(list.json.NextToken, "");
  const listCall = calls.find((c) => c.method === "listSnapshots")!;
  assert.deepEqual(
    [listCall.params.MaxEntries, listCall.params.StartingToken, listCall.params.Secrets],
    [5, "x", { token: "abc" }],
  );
  assert.match((await http(base, "GET", "/v1/volumes/snapshot")).text, /plugin_id: is required/);
  assert.equal((await http(base, "GET", "/v1/volumes/snapshot?plugin_id=nope")).status, 404);
  assert.equal((await http(base, "GET", "/v1/volumes/snapshot?plugin_id=p1&per_page=-1")).status, 400);
  const unsupported = await http(base, "GET", "/v1/volumes/snapshot?plugin_id=p2");
  assert.equal(unsupported.status, 400);
  assert.match(unsupported.text, /does not support ListSnapshots/);

  assert.match(
    (await http(base, "DELETE", "/v1/volumes/snapshot?plugin_id=p1")).text,
    /snapshot_id: is required/,
  );
  const del = await http(base, "DELETE", "/v1/volumes/snapshot?plugin_id=p1&snapshot_id=snap-s1", undefined, {
    "X-Nomad-CSI-Secrets": "token=abc",
  });
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(calls.find((c) => c.method === "deleteSnapshot")!.params, {
    PluginID: "p1",
    SnapshotID: "snap-s1",
    Secrets: { token: "abc" },
  });

  const external = await http(base, "GET", "/v1/volumes/external?plugin_id=p1");
  assert.equal(external.status, 200, external.text);
  assert.deepEqual(external.json.Volumes[0].PublishedExternalNodeIDs, ["ext-n1"]);
  assert.equal(external.json.NextToken, "");
  assert.equal((await http(base, "GET", "/v1/volumes/external")).status, 400);
});

test("expansion: ControllerExpandVolume, then NodeExpandVolume per claim; recorded after the node step", async (t) => {
  const { base, peer, calls, state } = await setup(t);
  const allocId = await claimedAlloc(base, peer, "web");
  const grow = (min: number, extra: Record<string, unknown> = {}) =>
    http(base, "PUT", "/v1/volume/csi/vol1/create", {
      Volumes: [volSpec({ RequestedCapacityMin: min, ...extra })],
    });
  const capacity = async () =>
    (await http(base, "GET", "/v1/volume/csi/vol1?claims=true")).json.Capacity as number;

  const r = await grow(4096);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.Volumes[0].Capacity, 4096);
  assert.ok(!r.text.includes("hunter2"));
  const expand = calls.find((c) => c.method === "expand")!;
  assert.deepEqual(
    [expand.params.ExternalVolumeID, expand.params.CapacityMin, expand.params.Capability],
    ["ext-vol1", 4096, { AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  );
  const nodeExpand = calls.find((c) => c.method === "nodeExpand")!;
  assert.deepEqual(
    [
      nodeExpand.params.AllocID,
      nodeExpand.params.VolumeID,
      nodeExpand.params.ExternalID,
      nodeExpand.params.Secrets,
    ],
    [allocId, "vol1", "ext-vol1", { password: "hunter2" }],
  );
  assert.deepEqual(
    calls.filter((c) => /expand/i.test(c.method)).map((c) => c.method),
    ["expand", "nodeExpand"],
  );

  assert.equal((await grow(4096)).status, 200);
  assert.equal(calls.filter((c) => c.method === "expand").length, 1, "the same size expands nothing");
  const shrink = await grow(1024, { RequestedCapacityMax: 2048 });
  assert.equal(shrink.status, 400);
  assert.match(shrink.text, /Volumes\[0\]\.RequestedCapacityMax: .*cannot shrink/);

  state.failNodeExpand = true;
  const failed = await grow(8192);
  assert.equal(failed.status, 503, failed.text);
  assert.match(failed.text, /NodeExpandVolume failed on node n1 \(allocation .*disk on fire/);
  assert.equal(await capacity(), 4096, "the old capacity stays on record");
  state.failNodeExpand = false;
  assert.equal((await grow(8192)).status, 200);
  assert.equal(await capacity(), 8192);
  assert.equal(calls.filter((c) => c.method === "nodeExpand").length, 3);
});

test("detach and deregister -force: refused while the alloc runs; node step, then the release walk", async (t) => {
  const { base, peer, calls } = await setup(t);
  const alloc1 = await claimedAlloc(base, peer, "web");
  await setStatus(peer, alloc1, "running");

  const busy = await http(base, "DELETE", "/v1/volume/csi/vol1/detach?node=n1");
  assert.equal(busy.status, 409);
  assert.match(busy.text, new RegExp(`running allocation\\(s\\) ${alloc1}`));
  assert.match((await http(base, "DELETE", "/v1/volume/csi/vol1/detach")).text, /node: is required/);
  assert.equal((await http(base, "DELETE", "/v1/volume/csi/vol1/detach?node=n9")).status, 404);
  assert.equal((await http(base, "DELETE", "/v1/volume/csi/nope/detach?node=n1")).status, 404);
  assert.equal((await http(base, "DELETE", "/v1/volume/csi/vol1?force=true")).status, 409);
  assert.equal(calls.filter((c) => c.method === "nodeDetach" || c.method === "unpublish").length, 0);

  await setStatus(peer, alloc1, "complete");
  const detached = await http(base, "DELETE", "/v1/volume/csi/vol1/detach?node=n1");
  assert.equal(detached.status, 200, detached.text);
  assert.deepEqual(
    calls
      .filter((c) => c.method === "nodeDetach" || c.method === "unpublish")
      .map((c): [string, string] => [c.method, String(c.params.AllocID ?? c.params.ExternalNodeID)]),
    [
      ["nodeDetach", alloc1],
      ["unpublish", "ext-n1"],
    ],
  );
  const vol = await http(base, "GET", "/v1/volume/csi/vol1?claims=true");
  assert.deepEqual([vol.json.ReadAllocs, vol.json.WriteAllocs, vol.json.PastClaims], [{}, {}, {}]);
  assert.equal((await http(base, "DELETE", "/v1/volume/csi/vol1/detach?node=n1")).status, 200, "idempotent");
  assert.equal(calls.filter((c) => c.method === "nodeDetach").length, 1);

  await http(base, "DELETE", "/v1/job/web?purge=true");
  const alloc2 = await claimedAlloc(base, peer, "web2");
  await setStatus(peer, alloc2, "complete");
  assert.equal((await http(base, "DELETE", "/v1/volume/csi/vol1")).status, 409, "not forced: still claimed");
  const forced = await http(base, "DELETE", "/v1/volume/csi/vol1?force=true");
  assert.equal(forced.status, 200, forced.text);
  assert.deepEqual(
    calls
      .filter((c) => c.method === "nodeDetach" || c.method === "unpublish")
      .slice(2)
      .map((c) => c.method),
    ["nodeDetach", "unpublish"],
  );
  assert.equal(calls.filter((c) => c.method === "nodeDetach")[1]!.params.AllocID, alloc2);
  assert.equal((await http(base, "GET", "/v1/volume/csi/vol1?claims=true")).status, 404);
});
