/**
 * Issue 10, "one odd node breaks scheduling for everyone": a node peer that registers without a
 * Drivers field (or with any field of the wrong shape) is refused with a validation error naming
 * the field, and nothing is stored; a record that lacks a map anyway (stored by an older server)
 * makes its node infeasible, never a 500 for every job registration. Real parts: an in-process
 * server on loopback, node agents on the real agent RPC path, a real SQLite state file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { nullLogger } from "../../../src/internal/log.js";
import { isBerthError } from "../../../src/structs/errors.js";
import type { Node } from "../../../src/structs/node.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { connectAgent, http, startServer, type AgentPeer } from "./fake_agent.js";

const jobSpec = {
  ID: "web",
  TaskGroups: [{ Name: "g", Count: 2, Tasks: [{ Name: "t", Driver: "exec" }] }],
};

/** Node.Register answers a validation error naming `field`; returns the error's message. */
async function refused(peer: AgentPeer, node: unknown, field: string): Promise<string> {
  const err = await peer.call("Node.Register", { Node: node as Node }).then(
    () => assert.fail(`registering ${JSON.stringify(node).slice(0, 200)} should be refused`),
    (e: unknown) => e,
  );
  assert.ok(isBerthError(err), String(err));
  assert.equal(err.code, "ERR_VALIDATION", err.message);
  assert.equal(err.field, field, err.message);
  return err.message;
}

async function placedNodes(base: string): Promise<string[]> {
  const allocs = await http(base, "GET", "/v1/job/web/allocations");
  assert.equal(allocs.status, 200, allocs.text);
  return (allocs.json as { NodeID: string }[]).map((a) => a.NodeID).sort();
}

test("a node peer without Drivers is refused with a coded error; jobs still place on good nodes", async (t) => {
  const base = await startServer(t);
  const good = await connectAgent(base);
  t.after(() => good.close());
  await good.call("Node.Register", { Node: makeNode("good") });

  const odd = await connectAgent(base);
  t.after(() => odd.close());
  const { Drivers: _drivers, ...noDrivers } = makeNode("odd");
  const message = await refused(odd, noDrivers, "Node.Drivers");
  assert.match(message, /Node\.Drivers: is required/);
  assert.equal((await http(base, "GET", "/v1/node/odd")).status, 404, "nothing is stored");
  const nodes = await http(base, "GET", "/v1/nodes");
  assert.deepEqual(
    (nodes.json as { ID: string }[]).map((n) => n.ID),
    ["good"],
  );

  const reg = await http(base, "PUT", "/v1/jobs", { Job: jobSpec });
  assert.equal(reg.status, 200, reg.text);
  assert.deepEqual(await placedNodes(base), ["good", "good"]);
});

test("every node field the server reads is checked on the way in, naming the field", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  const n = (over: Record<string, unknown>) => ({ ...makeNode("odd"), ...over });
  const cases: [unknown, string][] = [
    ["not an object", "Node"],
    [n({ ID: "../etc" }), "Node.ID"],
    [n({ Datacenter: 7 }), "Node.Datacenter"],
    [n({ Datacenter: "" }), "Node.Datacenter"],
    [n({ Name: { x: 1 } }), "Node.Name"],
    [n({ NodeClass: [] }), "Node.NodeClass"],
    [n({ SchedulingEligibility: "maybe" }), "Node.SchedulingEligibility"],
    [n({ Drivers: [] }), "Node.Drivers"],
    [n({ Drivers: { exec: "yes" } }), "Node.Drivers.exec"],
    [n({ Drivers: { exec: { Detected: "true", Healthy: true } } }), "Node.Drivers.exec.Detected"],
    [n({ Drivers: { "": { Detected: true } } }), "Node.Drivers."],
    [n({ Attributes: { "kernel.name": 5 } }), "Node.Attributes.kernel.name"],
    [n({ Meta: "rack=1" }), "Node.Meta"],
    [n({ HostVolumes: { data: { Path: "relative" } } }), "Node.HostVolumes.data.Path"],
    [n({ HostVolumes: { data: { Path: "/srv", ReadOnly: "no" } } }), "Node.HostVolumes.data.ReadOnly"],
    [n({ CSINodePlugins: { p1: null } }), "Node.CSINodePlugins.p1"],
    [n({ CSINodePlugins: { "../p": nodePluginInfo("p") } }), "Node.CSINodePlugins key"],
    [n({ CSINodePlugins: { p1: nodePluginInfo("p2") } }), "Node.CSINodePlugins.p1.PluginID"],
    [
      n({ CSINodePlugins: { p1: { ...nodePluginInfo("p1"), Healthy: "yes" } } }),
      "Node.CSINodePlugins.p1.Healthy",
    ],
    [
      n({ CSINodePlugins: { p1: nodePluginInfo("p1", {}, { MaxVolumes: -1 }) } }),
      "Node.CSINodePlugins.p1.NodeInfo.MaxVolumes",
    ],
    [
      n({ CSINodePlugins: { p1: nodePluginInfo("p1", {}, { MaxVolumes: 1e300 }) } }),
      "Node.CSINodePlugins.p1.NodeInfo.MaxVolumes",
    ],
    [
      n({
        CSINodePlugins: {
          p1: nodePluginInfo("p1", {}, { AccessibleTopology: { Segments: { zone: 1 } } as never }),
        },
      }),
      "Node.CSINodePlugins.p1.NodeInfo.AccessibleTopology.Segments.zone",
    ],
    [
      n({ CSIControllerPlugins: { p1: { ...nodePluginInfo("p1"), ControllerInfo: "attach" } } }),
      "Node.CSIControllerPlugins.p1.ControllerInfo",
    ],
  ];
  for (const [node, field] of cases) await refused(peer, node, field);
  assert.equal((await http(base, "GET", "/v1/nodes")).json.length, 0, "no refused node was stored");

  // A fingerprint update is held to the same rules, and a refused one changes nothing.
  await peer.call("Node.Register", { Node: makeNode("odd") });
  const before = await http(base, "GET", "/v1/node/odd");
  const err = await peer
    .call("Node.UpdateFingerprint", {
      NodeID: "odd",
      Drivers: { exec: { Detected: 1 } } as never,
      CSIControllerPlugins: {},
      CSINodePlugins: {},
    })
    .then(
      () => assert.fail("a junk fingerprint should be refused"),
      (e: unknown) => e,
    );
  assert.ok(isBerthError(err) && err.code === "ERR_VALIDATION" && err.field === "Drivers.exec.Detected");
  const after = await http(base, "GET", "/v1/node/odd");
  assert.equal(after.json.ModifyIndex, before.json.ModifyIndex, "nothing changed");
});

test("a stored node record without Drivers or plugin maps is infeasible, never a 500", async (t) => {
  // A record from before validation on the way in: written straight into the state file.
  const dataDir = tempDir("berth-odd-node-");
  const seed = new SqliteStateStore(dataDir);
  const { Drivers: _d, CSINodePlugins: _n, CSIControllerPlugins: _c, ...bare } = makeNode("old");
  const { CSINodePlugins: _n2, CSIControllerPlugins: _c2, ...noPlugins } = makeNode("old2");
  await seed.txn((tx) => {
    tx.putNode(bare as Node);
    tx.putNode(noPlugins as Node);
  });
  seed.close();

  const server = new Server({ dataDir, httpAddr: "127.0.0.1:0", log: nullLogger, heartbeatTtlMs: 60_000 });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const good = await connectAgent(base);
  t.after(() => good.close());
  await good.call("Node.Register", {
    Node: makeNode("good", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });

  const reg = await http(base, "PUT", "/v1/jobs", { Job: jobSpec });
  assert.equal(reg.status, 200, reg.text);
  // old2 has drivers: a plain job may go there too; "old" (no drivers) never gets one.
  assert.ok(!(await placedNodes(base)).includes("old"));

  // A CSI job reads the nodes' plugin maps: the records without them are infeasible.
  const vol = await http(base, "PUT", "/v1/volume/csi/vol1", {
    Volumes: [
      {
        ID: "vol1",
        Name: "vol1",
        PluginID: "p1",
        ExternalID: "ext-vol1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(vol.status, 200, vol.text);
  const csiJob = {
    ID: "csi",
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
  const csi = await http(base, "PUT", "/v1/jobs", { Job: csiJob });
  assert.equal(csi.status, 200, csi.text);
  const allocs = await http(base, "GET", "/v1/job/csi/allocations");
  assert.deepEqual(
    (allocs.json as { NodeID: string }[]).map((a) => a.NodeID),
    ["good"],
  );
});

test("a node peer's alloc updates and alloc queries are checked too; a refused one changes nothing", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", { Node: makeNode("good") });
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: jobSpec })).status, 200);
  const [alloc] = (await http(base, "GET", "/v1/job/web/allocations")).json as {
    ID: string;
    ModifyIndex: number;
  }[];
  const update = (u: Record<string, unknown>) =>
    peer.call("Node.UpdateAllocs", { NodeID: "good", Allocs: [{ ID: alloc!.ID, ...u } as never] });
  const cases: [Record<string, unknown>, string][] = [
    [{ ClientStatus: "banana" }, "Allocs[0].ClientStatus"],
    [{ ClientStatus: "failed", TaskStates: { t: null } }, "Allocs[0].TaskStates.t"],
    [
      { ClientStatus: "failed", TaskStates: { t: { State: "dead", FinishedAt: 7 } } },
      "Allocs[0].TaskStates.t.FinishedAt",
    ],
    [
      { ClientStatus: "running", TaskStates: { t: { State: "running", Events: [{ Time: "now" }] } } },
      "Allocs[0].TaskStates.t.Events[0].Time",
    ],
  ];
  for (const [u, field] of cases) {
    const err = await update(u).then(
      () => assert.fail(`${JSON.stringify(u)} should be refused`),
      (e: unknown) => e,
    );
    assert.ok(isBerthError(err) && err.code === "ERR_VALIDATION" && err.field === field, String(err));
  }
  const after = (await http(base, "GET", `/v1/allocation/${alloc!.ID}`)).json as { ModifyIndex: number };
  assert.equal(after.ModifyIndex, alloc!.ModifyIndex, "no refused update was stored");

  const err = await peer
    .call("Node.GetAllocs", { NodeID: "good", MinIndex: 1, WaitMs: "forever" as never })
    .then(
      () => assert.fail("a junk WaitMs should be refused"),
      (e: unknown) => e,
    );
  assert.ok(isBerthError(err) && err.code === "ERR_VALIDATION" && err.field === "WaitMs", String(err));

  // A well-formed report still goes through, and the scheduler reads it.
  await update({
    ClientStatus: "failed",
    ClientDescription: "task failed",
    TaskStates: { t: { State: "dead", Failed: true, FinishedAt: new Date().toISOString(), Events: [] } },
  });
  assert.equal((await http(base, "GET", `/v1/allocation/${alloc!.ID}`)).json.ClientStatus, "failed");
});

test("a node peer's request without a body or NodeID is its validation error, not an internal one", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", { Node: makeNode("good") });
  for (const body of [null, {}, { NodeID: 7 }]) {
    const err = await peer.call("Node.Heartbeat", body as never).then(
      () => assert.fail(`Node.Heartbeat ${JSON.stringify(body)} should be refused`),
      (e: unknown) => e,
    );
    assert.ok(isBerthError(err), String(err));
    assert.equal(err.code, "ERR_VALIDATION", err.message);
    assert.equal(err.field, "NodeID", err.message);
  }
  // The connection is still good for the node's own calls.
  await peer.call("Node.Heartbeat", { NodeID: "good" });
});
