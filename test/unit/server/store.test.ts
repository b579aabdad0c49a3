import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { CSIPlugin } from "../../../src/structs/plugin.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

test("store: the index is monotonic, stamps records and skips no-op writes", async () => {
  const s = new SqliteStateStore(null);
  assert.equal(s.index(), 0);
  const n = await s.txn((tx) => tx.putNode(makeNode("n1")));
  assert.equal(n.CreateIndex, 1);
  assert.equal(s.index(), 1);
  assert.equal(s.tableIndex("nodes"), 1);
  await s.txn((tx) => tx.putNode(makeNode("n1")));
  assert.equal(s.index(), 1, "an unchanged put writes nothing");
  const v = await s.txn((tx) => tx.putVolume(makeVolume("v1")));
  assert.equal(s.index(), 2);
  assert.equal(s.tableIndex("nodes"), 1);
  const v2 = await s.txn((tx) => tx.putVolume({ ...v, Name: "renamed" }));
  assert.deepEqual([v2.CreateIndex, v2.ModifyIndex], [2, 3]);
  s.close();
});

test("store: a throwing txn writes nothing", async () => {
  const s = new SqliteStateStore(null);
  await assert.rejects(
    s.txn((tx) => {
      tx.putVolume(makeVolume("v1"));
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.equal(s.getVolume("default", "v1"), undefined);
  assert.equal(s.index(), 0);
  s.close();
});

test("store: waitFor resolves on a write to a watched table, not another", async () => {
  const s = new SqliteStateStore(null);
  let woke = false;
  const p = s.waitFor(["volumes"], 0, undefined, 5000).then((i) => {
    woke = true;
    return i;
  });
  await s.txn((tx) => tx.putNode(makeNode("n1")));
  await new Promise((r) => setImmediate(r));
  assert.equal(woke, false);
  await s.txn((tx) => tx.putVolume(makeVolume("v1")));
  assert.equal(await p, 2);
  const t0 = Date.now();
  assert.equal(await s.waitFor(["volumes"], 2, undefined, 50), 2);
  assert.ok(Date.now() - t0 >= 40, "times out when nothing moves");
  const ac = new AbortController();
  const aborted = s.waitFor(["jobs"], 5, ac.signal, 5000);
  ac.abort();
  await assert.rejects(aborted);
  s.close();
});

test("store: JSON roundtrip and reopening the file keeps records and indexes", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-store-"));
  try {
    const s = new SqliteStateStore(dir);
    const vol = makeVolume("v1", {
      Secrets: { k: "v" },
      Parameters: { a: "b" },
      Topologies: [{ Segments: { zone: "a" } }],
    });
    const stored = await s.txn((tx) => tx.putVolume(vol));
    s.close();
    const again = new SqliteStateStore(dir);
    assert.deepEqual(again.getVolume("default", "v1"), stored);
    assert.equal(again.index(), 1);
    assert.equal(again.tableIndex("volumes"), 1);
    await again.txn((tx) => tx.putVolume({ ...stored, Name: "x" }));
    assert.equal(again.index(), 2);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("store: plugins are derived from node fingerprints", async () => {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putNode(
      makeNode("n1", {
        CSINodePlugins: { p1: nodePluginInfo("p1") },
        CSIControllerPlugins: { p1: controllerInfo("p1") },
      }),
    );
    tx.putNode(makeNode("n2", { CSINodePlugins: { p1: nodePluginInfo("p1", { Healthy: false }) } }));
  });
  // The instances each side has; Expected comes from the jobs that declare the plugin (none here).
  const instances = (p: CSIPlugin) => [Object.keys(p.Nodes).length, Object.keys(p.Controllers).length];
  let p = s.getPlugin("p1")!;
  assert.deepEqual(
    [p.NodesHealthy, ...instances(p), p.ControllersHealthy, p.ControllerRequired],
    [1, 2, 1, 1, true],
  );
  assert.deepEqual([p.NodesExpected, p.ControllersExpected], [0, 0], "no job declares it");
  const pluginIdx = s.tableIndex("plugins");
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n2")!, Name: "renamed" }));
  assert.equal(s.tableIndex("plugins"), pluginIdx, "an unchanged plugin does not move its index");
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, CSINodePlugins: {}, CSIControllerPlugins: {} }));
  p = s.getPlugin("p1")!;
  assert.deepEqual(instances(p), [1, 0]);
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n2")!, CSINodePlugins: {} }));
  p = s.getPlugin("p1")!;
  assert.deepEqual(
    [...instances(p), p.EmptySince > 0],
    [0, 0, true],
    "a plugin with no instance left is kept, stamped empty, for the garbage collector",
  );
  s.close();
});

test("store: allocs are indexed by node, job and volume (per_alloc resolved)", async () => {
  const { csiJob } = await import("../../builders/job.js");
  const s = new SqliteStateStore(null);
  const job = csiJob("j", { source: "vol", perAlloc: true });
  await s.txn((tx) => {
    for (const [i, node] of ["n1", "n2"].entries()) {
      tx.putAlloc({
        ID: `a${i}`,
        Namespace: "default",
        Name: `j.g[${i}]`,
        NodeID: node,
        NodeName: node,
        JobID: "j",
        Job: job,
        TaskGroup: "g",
        DesiredStatus: "run",
        DesiredDescription: "",
        ClientStatus: "pending",
        ClientDescription: "",
        TaskStates: {},
        CreateIndex: 0,
        ModifyIndex: 0,
        AllocModifyIndex: 0,
        CreateTime: 0,
        ModifyTime: 0,
      });
    }
  });
  assert.deepEqual(
    s.allocsByNode("n2").map((a) => a.ID),
    ["a1"],
  );
  assert.deepEqual(
    s.allocsByJob("default", "j").map((a) => a.ID),
    ["a0", "a1"],
  );
  assert.deepEqual(
    s.allocsByVolume("default", "vol[1]").map((a) => a.ID),
    ["a1"],
  );
  assert.deepEqual(s.allocsByVolume("default", "vol"), []);
  s.close();
});
