/**
 * The node RPCs do work proportional to what changed, not to the node's alloc count:
 * - Node.GetAllocs waits for what the *server* writes to the node's allocs (AllocModifyIndex, as
 *   Nomad's): the node's own status report does not answer its wait with its whole alloc list;
 *   the server's stop does.
 * - CSIVolume.GetForNode naming the alloc checks that one alloc: its own alloc that requests the
 *   volume is answered; another node's alloc, an unknown alloc, or an alloc that does not request
 *   the volume is refused alike (the node learns nothing about allocs that are not its own).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer } from "./fake_agent.js";

const job = (id: string, volume?: string) => ({
  ID: id,
  TaskGroups: [
    {
      Name: "g",
      ...(volume
        ? {
            Volumes: {
              data: {
                Type: "csi",
                Source: volume,
                AccessMode: "single-node-writer",
                AttachmentMode: "file-system",
              },
            },
          }
        : {}),
      Tasks: [{ Name: "t", Driver: "exec", Resources: { CPU: 10, MemoryMB: 10 } }],
    },
  ],
});

test("Node.GetAllocs answers the server's writes, not the node's own status reports", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base, {});
  t.after(() => peer.close());
  await peer.call("Node.Register", { Node: makeNode("n1") });
  const reg = await http(base, "PUT", "/v1/jobs", { Job: job("web") });
  assert.equal(reg.status, 200, reg.text);

  const first = await peer.call("Node.GetAllocs", { NodeID: "n1", MinIndex: 0, WaitMs: 0 });
  assert.equal(first.Allocs.length, 1);
  const a = first.Allocs[0]!;
  const waiting = peer.call("Node.GetAllocs", { NodeID: "n1", MinIndex: first.Index, WaitMs: 20_000 });
  await peer.call("Node.UpdateAllocs", {
    NodeID: "n1",
    Allocs: [{ ID: a.ID, ClientStatus: "running", ClientDescription: "", TaskStates: {} }],
  });
  const running = await http(base, "GET", `/v1/allocation/${a.ID}`);
  assert.equal(running.json.ClientStatus, "running", "the report was applied");
  assert.equal(running.json.AllocModifyIndex, a.AllocModifyIndex, "the node's report keeps AllocModifyIndex");

  const stop = await http(base, "DELETE", "/v1/job/web");
  assert.equal(stop.status, 200, stop.text);
  const woken = await waiting;
  assert.deepEqual(
    woken.Allocs.map((x) => [x.ID, x.DesiredStatus, x.ClientStatus]),
    [[a.ID, "stop", "running"]],
    "the wait was answered by the server's stop, not by the node's report before it",
  );
  assert.ok(woken.Allocs[0]!.AllocModifyIndex > a.AllocModifyIndex);
});

test("CSIVolume.GetForNode with the alloc checks that alloc only", async (t) => {
  const base = await startServer(t);
  const plugins = { CSINodePlugins: { p1: nodePluginInfo("p1", {}, { ID: "ext" }) } };
  const own = await connectAgent(base, {});
  const other = await connectAgent(base, {});
  t.after(() => own.close());
  t.after(() => other.close());
  await own.call("Node.Register", { Node: makeNode("n1", plugins) });
  for (const id of ["vol1", "vol2"]) {
    const r = await http(base, "PUT", `/v1/volume/csi/${id}`, {
      Volumes: [
        {
          ID: id,
          Name: id,
          ExternalID: `ext-${id}`,
          PluginID: "p1",
          RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
        },
      ],
    });
    assert.equal(r.status, 200, r.text);
  }
  const reg = await http(base, "PUT", "/v1/jobs", { Job: job("web", "vol1") });
  assert.equal(reg.status, 200, reg.text);
  const [alloc] = (await http(base, "GET", "/v1/job/web/allocations")).json as {
    ID: string;
    NodeID: string;
  }[];
  assert.equal(alloc?.NodeID, "n1");
  await other.call("Node.Register", { Node: makeNode("n2", plugins) });

  const ask = (peer: typeof own, NodeID: string, VolumeID: string, AllocationID: string) =>
    peer.call("CSIVolume.GetForNode", { VolumeID, Namespace: "default", NodeID, AllocationID });
  const lookup = await ask(own, "n1", "vol1", alloc.ID);
  assert.deepEqual([lookup.ID, lookup.PluginID], ["vol1", "p1"]);
  for (const [label, call] of [
    ["another node's alloc", ask(other, "n2", "vol1", alloc.ID)],
    ["a volume the alloc does not request", ask(own, "n1", "vol2", alloc.ID)],
    ["an unknown alloc", ask(own, "n1", "vol1", "00000000-0000-4000-8000-000000000000")],
  ] as const) {
    await assert.rejects(
      call,
      (err: Error & { code?: string }) =>
        err.code === "ERR_PERMISSION_DENIED" && /no allocation .* requests volume/.test(err.message),
      label,
    );
  }
});
