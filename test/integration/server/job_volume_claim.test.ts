/**
 * Volumes from the jobspec against a real server and a fake node agent over the real RPC: the
 * plan API lists the volume to create; placement makes the leader create it through the node's
 * controller with the node's topology; while the create has not succeeded (the storage answers
 * INTERNAL, retried by the leader) the node's lookup answers the create's plugin and its claim is
 * refused retryably (never "not found"), and once the create is recorded the same claim succeeds.
 * (A claim that arrives while a CreateVolume is in flight waits for it on the volume's lock.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BerthError, isBerthError, isClaimRetryable } from "../../../src/structs/errors.js";
import { eventually } from "../../helpers/agent_process.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer, type Call } from "./fake_agent.js";

const jobSpec = {
  ID: "db",
  TaskGroups: [
    {
      Name: "g",
      Volumes: {
        data: {
          Type: "csi",
          Source: "data",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
          Create: { PluginID: "p1", RequestedCapacityMin: 4096, OnPurge: "delete" },
        },
      },
      Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
    },
  ],
};

test("a claim waits while the job's volume is being created, then succeeds", async (t) => {
  const base = await startServer(t);
  const calls: Call[] = [];
  // The storage answers INTERNAL (the leader retries) until the test lets the create succeed.
  let available = false;
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      calls.push({ method: "create", params: p });
      if (!available) throw new BerthError("ERR_CSI_INTERNAL", "storage busy");
      return {
        ExternalVolumeID: `ext-${p.Name}`,
        CapacityBytes: p.CapacityMin,
        VolumeContext: {},
        Topologies: [],
      };
    },
  });
  t.after(() => peer.close());
  const topology = { Segments: { host: "n1" } };
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: { p1: controllerInfo("p1", false) },
      CSINodePlugins: { p1: nodePluginInfo("p1", {}, { ID: "ext-n1", AccessibleTopology: topology }) },
    }),
  });

  const plan = await http(base, "PUT", "/v1/job/db/plan", { Job: jobSpec });
  assert.equal(plan.status, 200, plan.text);
  assert.deepEqual(plan.json.CreatedVolumes, [
    { Namespace: "default", ID: "data", PluginID: "p1", TaskGroup: "g", Volume: "data", OnPurge: "delete" },
  ]);

  const reg = await http(base, "PUT", "/v1/jobs", { Job: jobSpec });
  assert.equal(reg.status, 200, reg.text);
  const allocs = await http(base, "GET", "/v1/job/db/allocations");
  assert.equal(allocs.json.length, 1, "placed although the volume does not exist yet");
  const allocId: string = allocs.json[0].ID;

  await eventually("the leader's CreateVolume", async () => (calls.length > 0 ? true : undefined));
  assert.equal(calls[0]!.params.Name, "data");
  assert.equal(calls[0]!.params.CapacityMin, 4096);
  assert.deepEqual(calls[0]!.params.TopologyRequest, { Required: [topology], Preferred: [topology] });

  const lookup = await peer.call("CSIVolume.GetForNode", {
    VolumeID: "data",
    Namespace: "default",
    NodeID: "n1",
    AllocationID: allocId,
  });
  assert.equal(lookup.PluginID, "p1", "the node learns the plugin before the volume exists");
  const claim = {
    VolumeID: "data",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    Mode: "write" as const,
    AccessMode: "single-node-writer" as const,
    AttachmentMode: "file-system" as const,
  };
  await assert.rejects(peer.call("CSIVolume.Claim", claim), (err: unknown) => {
    assert.ok(isBerthError(err), String(err));
    assert.ok(isClaimRetryable(err.code), `the agent retries it: ${err.code}`);
    assert.match(err.message, /not created yet/);
    return true;
  });

  available = true;
  const vol = await eventually("the volume to be recorded", async () => {
    const r = await http(base, "GET", "/v1/volume/csi/data");
    return r.status === 200 ? (r.json as { ExternalID: string; CreatedBy: unknown }) : undefined;
  });
  assert.equal(vol.ExternalID, "ext-data");
  assert.deepEqual(vol.CreatedBy, { JobID: "db", TaskGroup: "g", Volume: "data", OnPurge: "delete" });
  const claimed = await peer.call("CSIVolume.Claim", claim);
  assert.equal(claimed.Volume.ID, "data");
  assert.ok(
    calls.every((c) => c.params.Name === "data"),
    "every attempt used the same name: CSI answers the same storage",
  );
});
