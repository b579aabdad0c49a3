/**
 * Volume contention is visible (issue 29): a job that needs a single-writer volume another job's
 * alloc holds is a placement failure with Nomad's words in `job plan` and in its evaluations (a
 * blocked eval), never a silent wait; once the holder's claim is released, the blocked eval places
 * it. Through the real server over HTTP and a fake node agent that claims and releases as a real
 * one does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer } from "./fake_agent.js";

const EXHAUSTED = "CSI volume vol1 has exhausted its available writer claims";

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

test("a single-writer volume held by another job: plan and evals say so, and the claim's release places the waiter", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  const vol = await http(base, "PUT", "/v1/volume/csi/vol1", {
    Volumes: [
      {
        ID: "vol1",
        PluginID: "p1",
        ExternalID: "ext-vol1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(vol.status, 200, vol.text);
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: jobSpec("holder") })).status, 200);
  const holder = (await http(base, "GET", "/v1/job/holder/allocations")).json[0];
  await peer.call("CSIVolume.Claim", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: holder.ID,
    NodeID: "n1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  await peer.call("Node.UpdateAllocs", {
    NodeID: "n1",
    Allocs: [{ ID: holder.ID, ClientStatus: "running", ClientDescription: "", TaskStates: {} }],
  });

  const plan = await http(base, "PUT", "/v1/job/waiter/plan", { Job: jobSpec("waiter") });
  assert.equal(plan.status, 200, plan.text);
  assert.deepEqual(plan.json.FailedTGAllocs?.g?.ConstraintFiltered, { [EXHAUSTED]: 1 });

  const reg = await http(base, "PUT", "/v1/jobs", { Job: jobSpec("waiter") });
  assert.equal(reg.status, 200, reg.text);
  const evals = await http(base, "GET", "/v1/job/waiter/evaluations");
  const [first, blocked] = evals.json;
  assert.deepEqual(first.FailedTGAllocs?.g?.ConstraintFiltered, { [EXHAUSTED]: 1 });
  assert.equal(blocked?.Status, "blocked");
  assert.deepEqual((await http(base, "GET", "/v1/job/waiter/allocations")).json, []);

  // The holder is stopped; its node stops the task and releases the claim, as a node agent does
  // after unmounting.
  assert.equal((await http(base, "DELETE", "/v1/job/holder")).status, 200);
  await peer.call("Node.UpdateAllocs", {
    NodeID: "n1",
    Allocs: [{ ID: holder.ID, ClientStatus: "complete", ClientDescription: "", TaskStates: {} }],
  });
  const freedAt = Date.now();
  await peer.call("CSIVolume.Unpublish", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: holder.ID,
    NodeID: "n1",
    State: "node-detached",
  });
  let placed: { ID: string }[] = [];
  while (placed.length === 0 && Date.now() - freedAt < 30_000) {
    placed = (await http(base, "GET", "/v1/job/waiter/allocations")).json;
    if (placed.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(placed.length, 1, "the waiter is placed once the claim is released");
  process.stderr.write(`contention: the waiter was placed ${Date.now() - freedAt} ms after the release\n`);
});
