import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { Node } from "../../../src/structs/node.js";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { csiJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

async function setup(nodes: Node[], vols: CSIVolume[]) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    nodes.forEach((n) => tx.putNode(n));
    vols.forEach((v) => tx.putVolume(v));
  });
  return { store, scheduler: new Scheduler(store, nullLogger) };
}

async function run(nodes: Node[], vols: CSIVolume[], job = csiJob("j")) {
  const { store, scheduler } = await setup(nodes, vols);
  await store.txn((tx) => tx.putJob(job));
  const result = await scheduler.evaluate("default", job.ID);
  const allocs = store.allocsByJob("default", job.ID);
  return { store, scheduler, result, allocs };
}

const withPlugin = (id: string, info = nodePluginInfo("p1")) =>
  makeNode(id, { CSINodePlugins: { p1: info } });

test("scheduler: places on a node with a healthy node plugin", async () => {
  const { allocs, result } = await run([makeNode("bare"), withPlugin("good")], [makeVolume("vol1")]);
  assert.equal(result.placed, 1);
  assert.equal(allocs[0]!.NodeID, "good");
  assert.equal(allocs[0]!.Name, "j.g[0]");
});

test("scheduler: no node plugin or an unhealthy one blocks placement", async () => {
  const r1 = await run([makeNode("bare")], [makeVolume("vol1")]);
  assert.equal(r1.allocs.length, 0);
  assert.ok(
    Object.keys(r1.result.failures[0]!.metrics.ConstraintFiltered).some((k) =>
      k.includes("is missing from client bare"),
    ),
  );
  assert.ok(r1.scheduler.isBlocked("default", "j"));
  const r2 = await run([withPlugin("sick", nodePluginInfo("p1", { Healthy: false }))], [makeVolume("vol1")]);
  assert.equal(r2.allocs.length, 0);
  const r3 = await run([withPlugin("n1")], []);
  assert.ok(
    Object.keys(r3.result.failures[0]!.metrics.ConstraintFiltered).includes("missing CSI Volume vol1"),
  );
});

test("scheduler: a node at the plugin's MaxVolumes is not feasible for another volume", async () => {
  const node = withPlugin("n1", nodePluginInfo("p1", {}, { MaxVolumes: 1 }));
  const vols = [
    makeVolume("vol1", {
      RequestedCapabilities: [{ AccessMode: "multi-node-multi-writer", AttachmentMode: "file-system" }],
    }),
    makeVolume("vol2"),
  ];
  const { store, scheduler } = await setup([node], vols);
  await store.txn((tx) => tx.putJob(csiJob("a", { source: "vol1", accessMode: "multi-node-multi-writer" })));
  assert.equal((await scheduler.evaluate("default", "a")).placed, 1);
  await store.txn((tx) => tx.putJob(csiJob("b", { source: "vol2" })));
  const r = await scheduler.evaluate("default", "b");
  assert.equal(r.placed, 0);
  assert.ok(
    Object.keys(r.failures[0]!.metrics.ConstraintFiltered).some((k) =>
      k.includes("maximum number of volumes"),
    ),
  );
  await store.txn((tx) => tx.putJob(csiJob("c", { source: "vol1", accessMode: "multi-node-multi-writer" })));
  assert.equal(
    (await scheduler.evaluate("default", "c")).placed,
    1,
    "the volume already in use there does not count twice",
  );
});

test("scheduler: topology must match", async () => {
  const zoneA = withPlugin(
    "a",
    nodePluginInfo("p1", {}, { AccessibleTopology: { Segments: { zone: "a", rack: "1" } } }),
  );
  const zoneB = withPlugin(
    "b",
    nodePluginInfo("p1", {}, { AccessibleTopology: { Segments: { zone: "b" } } }),
  );
  const vol = makeVolume("vol1", { Topologies: [{ Segments: { zone: "a" } }] });
  const { allocs } = await run([zoneB, zoneA], [vol]);
  assert.equal(allocs[0]!.NodeID, "a");
  const none = await run([zoneB], [vol]);
  assert.equal(none.allocs.length, 0);
});

test("scheduler: proposed claims stop count=2 on a single-node-writer volume landing on two nodes", async () => {
  const { allocs, result } = await run(
    [withPlugin("n1"), withPlugin("n2")],
    [makeVolume("vol1")],
    csiJob("j", { count: 2 }),
  );
  assert.equal(result.placed, 1, "the second writer cannot be placed anywhere");
  assert.equal(allocs.length, 1);
  const mnr = makeVolume("ro", {
    RequestedCapabilities: [{ AccessMode: "multi-node-reader-only", AttachmentMode: "file-system" }],
  });
  const spread = await run(
    [withPlugin("n1"), withPlugin("n2")],
    [mnr],
    csiJob("r", { count: 2, source: "ro", accessMode: "multi-node-reader-only", readOnly: true }),
  );
  assert.deepEqual(spread.allocs.map((a) => a.NodeID).sort(), ["n1", "n2"], "readers spread across nodes");
});

test("scheduler: per_alloc claims Source[N]; stop marks allocs; completed batch allocs are not replaced", async () => {
  const vols = [makeVolume("v[0]"), makeVolume("v[1]")];
  const { store, scheduler, allocs } = await run(
    [withPlugin("n1"), withPlugin("n2")],
    vols,
    csiJob("j", { count: 2, source: "v", perAlloc: true }),
  );
  assert.equal(allocs.length, 2);
  assert.notEqual(allocs[0]!.NodeID, allocs[1]!.NodeID);
  await store.txn((tx) => tx.putJob({ ...tx.getJob("default", "j")!, Stop: true }));
  await scheduler.evaluate("default", "j");
  assert.ok(store.allocsByJob("default", "j").every((a) => a.DesiredStatus === "stop"));
  assert.equal(store.getJob("default", "j")!.Status, "dead");

  const b = await run([withPlugin("n1")], [makeVolume("vol1")], csiJob("b", { type: "batch" }));
  await b.store.txn((tx) => tx.putAlloc({ ...b.allocs[0]!, ClientStatus: "complete" }));
  assert.equal((await b.scheduler.evaluate("default", "b")).placed, 0);
  assert.equal(b.store.allocsByJob("default", "b").length, 1);
});

test("scheduler: job, group and task constraints filter nodes, with the constraint as the reason", async () => {
  const nodes = [withPlugin("a", undefined), withPlugin("b")].map((n, i) => ({
    ...n,
    Name: i === 0 ? "A" : "B",
  }));
  const constrain = (level: "job" | "group" | "task", op: string, value: string) => {
    const job = csiJob(`j-${level}-${value}`);
    const c = [{ LTarget: "${node.unique.name}", RTarget: value, Operand: op }];
    if (level === "job") job.Constraints = c;
    if (level === "group") job.TaskGroups[0]!.Constraints = c;
    if (level === "task") job.TaskGroups[0]!.Tasks[0]!.Constraints = c;
    return job;
  };
  for (const level of ["job", "group", "task"] as const) {
    const r = await run(nodes, [makeVolume("vol1")], constrain(level, "=", "B"));
    assert.equal(r.allocs[0]!.NodeID, "b", `${level} constraint = B`);
    const r2 = await run(nodes, [makeVolume("vol1")], constrain(level, "!=", "B"));
    assert.equal(r2.allocs[0]!.NodeID, "a", `${level} constraint != B`);
  }
  const none = await run(nodes, [makeVolume("vol1")], constrain("group", "=", "C"));
  assert.equal(none.allocs.length, 0);
  assert.deepEqual(none.result.failures[0]!.metrics.ConstraintFiltered, { "${node.unique.name} = C": 2 });
});
