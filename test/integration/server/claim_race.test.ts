/**
 * Claims against a real in-process server with fake node agents over the agent RPC: the claim is
 * recorded before ControllerPublishVolume runs, and two jobs racing for one single-node-writer volume
 * end with exactly one holder while the other waits (blocked) and gets the volume after the release.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, getJson, put, startServer, type AgentPeer } from "./fake_agent.js";

interface AllocView {
  ID: string;
  NodeID: string;
  JobID: string;
  ClientStatus: string;
  DesiredStatus: string;
}

async function putJob(base: string, id: string): Promise<void> {
  await put(base, "/v1/jobs", {
    Job: {
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
    },
  });
}

/** A fake node agent; its controller (on n1 only) records, at ControllerPublish, the volume's claims. */
async function connectNode(base: string, id: string, controller: boolean) {
  const publishes: { node: string; claimedAtPublish: string[] }[] = [];
  const unpublishes: string[] = [];
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerPublishVolume": async (p) => {
      const vol = await getJson<{ WriteAllocs: Record<string, unknown> }>(
        base,
        "/v1/volume/csi/vol1?claims=true",
      );
      publishes.push({ node: p.ExternalNodeID, claimedAtPublish: Object.keys(vol.WriteAllocs) });
      return { PublishContext: { attached_to: p.ExternalNodeID } };
    },
    "ClientCSI.ControllerValidateVolume": async () => ({}),
    "ClientCSI.ControllerUnpublishVolume": async (p) => {
      unpublishes.push(p.ExternalNodeID);
      return {};
    },
  });
  await peer.call("Node.Register", {
    Node: makeNode(id, {
      CSIControllerPlugins: controller ? { p1: controllerInfo("p1", true) } : {},
      CSINodePlugins: { p1: nodePluginInfo("p1", {}, { ID: `ext-${id}` }) },
    }),
  });
  return { peer, publishes, unpublishes };
}

test("a claim is recorded before ControllerPublish; racing jobs get the volume one after the other", async (t) => {
  const base = await startServer(t);
  const n1 = await connectNode(base, "n1", true);
  const n2 = await connectNode(base, "n2", false);
  t.after(() => {
    n1.peer.close();
    n2.peer.close();
  });
  const peers = { n1: n1.peer, n2: n2.peer } as Record<string, AgentPeer>;
  const reg = await fetch(base + "/v1/volume/csi/vol1", {
    method: "PUT",
    body: JSON.stringify({
      Volumes: [
        {
          ID: "vol1",
          Name: "vol1",
          PluginID: "p1",
          ExternalID: "ext-vol1",
          RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
        },
      ],
    }),
  });
  assert.equal(reg.status, 200, await reg.text());

  await Promise.all([putJob(base, "a"), putJob(base, "b")]);
  const live = (await getJson<AllocView[]>(base, "/v1/allocations")).filter((a) => a.DesiredStatus === "run");
  assert.equal(live.length, 1, "exactly one of the racing jobs is placed; the other waits");
  const first = live[0]!;
  const otherJob = first.JobID === "a" ? "b" : "a";

  const claim = (alloc: AllocView) =>
    peers[alloc.NodeID]!.call("CSIVolume.Claim", {
      VolumeID: "vol1",
      Namespace: "default",
      AllocationID: alloc.ID,
      NodeID: alloc.NodeID,
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
  // The same alloc claiming twice at once: one claim, the same publish_context.
  const [c1, c2] = await Promise.all([claim(first), claim(first)]);
  assert.deepEqual(c1.PublishContext, { attached_to: `ext-${first.NodeID}` });
  assert.deepEqual(c2.PublishContext, c1.PublishContext);
  assert.deepEqual(n1.publishes[0], { node: `ext-${first.NodeID}`, claimedAtPublish: [first.ID] });
  assert.ok(
    n1.publishes.every((p) => p.claimedAtPublish.includes(first.ID)),
    "ControllerPublish never runs before the claim is recorded",
  );

  const report = (alloc: AllocView, status: "running" | "complete") =>
    peers[alloc.NodeID]!.call("Node.UpdateAllocs", {
      NodeID: alloc.NodeID,
      Allocs: [{ ID: alloc.ID, ClientStatus: status, ClientDescription: "", TaskStates: {} }],
    });
  await report(first, "running");
  const stop = await fetch(`${base}/v1/job/${first.JobID}`, { method: "DELETE" });
  assert.equal(stop.status, 200);
  await report(first, "complete");
  const waiting = await getJson<AllocView[]>(base, `/v1/job/${otherJob}/allocations`);
  assert.deepEqual(waiting, [], "the other job still waits while the claim is held");

  await peers[first.NodeID]!.call("CSIVolume.Unpublish", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: first.ID,
    NodeID: first.NodeID,
    State: "node-detached",
  });
  assert.deepEqual(n1.unpublishes, [`ext-${first.NodeID}`]);
  let second: AllocView | undefined;
  for (let i = 0; i < 100 && !second; i++) {
    second = (await getJson<AllocView[]>(base, `/v1/job/${otherJob}/allocations`))[0];
    if (!second) await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(second, "the waiting job is placed once the volume is free");
  const c3 = await claim(second);
  assert.deepEqual(c3.PublishContext, { attached_to: `ext-${second.NodeID}` });
  const vol = await getJson<{ WriteAllocs: Record<string, unknown>; PastClaims: Record<string, unknown> }>(
    base,
    "/v1/volume/csi/vol1?claims=true",
  );
  assert.deepEqual(Object.keys(vol.WriteAllocs), [second.ID], "exactly one holder");
  assert.deepEqual(vol.PastClaims, {});
});
