/**
 * The jobs that declare a plugin (ControllerJobs/NodeJobs, kept by the store) and the plugin GC:
 * a plugin with no instance and no job is kept until the threshold passes, then removed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import { GarbageCollector } from "../../../src/server/gc/collector.js";
import { pluginCollectable } from "../../../src/server/gc/decide.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { Job } from "../../../src/structs/job.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { expectedOf, jobPluginUses } from "../../../src/structs/plugin_jobs.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { V1_COLUMNS, writeOldStateFile } from "../../builders/old_state.js";

/** A pass that removed nothing. */
const NOTHING = { jobs: [], allocs: [], nodes: [], plugins: [], evals: [], deployments: [] };

/** A plugin job: group "controller" (count 1) and group "nodes" (count `nodes`), or a monolith. */
function pluginJob(id: string, opts: { nodes?: number; monolith?: boolean; pluginId?: string } = {}): Job {
  const task = (type: string) => ({
    Name: "plugin",
    Driver: "raw_exec",
    CSIPluginConfig: { ID: opts.pluginId ?? "p1", Type: type, MountDir: "/csi" },
  });
  return validateJob({
    ID: id,
    TaskGroups: opts.monolith
      ? [{ Name: "mono", Count: 2, Tasks: [task("monolith")] }]
      : [
          { Name: "controller", Count: 1, Tasks: [task("controller")] },
          { Name: "nodes", Count: opts.nodes ?? 2, Tasks: [task("node")] },
        ],
  });
}

test("plugin jobs: which plugins a job declares, and how many allocs run each side", () => {
  assert.deepEqual(
    jobPluginUses(pluginJob("j", { nodes: 3 })).map((u) => [
      u.pluginId,
      expectedOf(u, {}).controller,
      expectedOf(u, {}).node,
    ]),
    [["p1", 1, 3]],
  );
  assert.deepEqual(
    jobPluginUses(pluginJob("m", { monolith: true })).map((u) => [
      expectedOf(u, {}).controller,
      expectedOf(u, {}).node,
    ]),
    [[2, 2]],
    "a monolith runs both sides",
  );
  assert.deepEqual(jobPluginUses({ ...pluginJob("j"), Stop: true }), [], "a stopped job runs none");
});

test("plugin jobs: registering a plugin job creates the plugin; stopping or purging it lets go", async () => {
  let now = 1_000;
  const s = new SqliteStateStore(null, { now: () => now });
  const job = await s.txn((tx) => tx.putJob(pluginJob("hostpath")));
  let p = s.getPlugin("p1")!;
  assert.deepEqual(p.ControllerJobs, {
    default: { hostpath: { Namespace: "default", ID: "hostpath", Version: 0, Expected: 1 } },
  });
  assert.equal(p.NodeJobs.default!.hostpath!.Expected, 2);
  assert.deepEqual(
    [p.NodesExpected, p.NodesHealthy, p.EmptySince],
    [2, 0, 0],
    "the job expects 2 node instances before any reports",
  );

  // Instances come and go while the job stays: the record stays, never stamped empty.
  await s.txn((tx) => tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } })));
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, CSINodePlugins: {} }));
  assert.equal(s.getPlugin("p1")!.EmptySince, 0, "the job still declares it");

  // A status-only update of the job does not rewrite the plugin.
  const idx = s.tableIndex("plugins");
  await s.txn((tx) => tx.putJob({ ...tx.getJob("default", "hostpath")!, Status: "running" }));
  assert.equal(s.tableIndex("plugins"), idx);

  now = 2_000;
  await s.txn((tx) => tx.putJob({ ...job, Stop: true }));
  p = s.getPlugin("p1")!;
  assert.deepEqual([p.ControllerJobs, p.NodeJobs, p.EmptySince], [{}, {}, 2_000]);

  now = 3_000;
  await s.txn((tx) => tx.putJob({ ...job, Stop: false, Version: 1 }));
  assert.equal(s.getPlugin("p1")!.EmptySince, 0, "running again");
  assert.equal(s.getPlugin("p1")!.NodeJobs.default!.hostpath!.Version, 1);
  now = 4_000;
  await s.txn((tx) => tx.deleteJob("default", "hostpath"));
  assert.equal(s.getPlugin("p1")!.EmptySince, 4_000, "purged");
  now = 5_000;
  await s.txn((tx) => tx.putNode(makeNode("n2")));
  assert.equal(s.getPlugin("p1")!.EmptySince, 4_000, "the clock is not restarted while it stays empty");
  s.close();
});

test("plugin gc: decisions", () => {
  const empty = { Controllers: {}, Nodes: {}, ControllerJobs: {}, NodeJobs: {}, EmptySince: 1_000 };
  assert.equal(pluginCollectable(empty, 5_000, 4_000), true);
  assert.equal(pluginCollectable(empty, 4_999, 4_000), false, "not empty for long enough");
  assert.equal(
    pluginCollectable({ ...empty, Nodes: { n1: nodePluginInfo("p1") } }, 9_000, 1),
    false,
    "an instance",
  );
  assert.equal(
    pluginCollectable(
      { ...empty, NodeJobs: { default: { j: { Namespace: "default", ID: "j", Version: 0, Expected: 1 } } } },
      9_000,
      1,
    ),
    false,
    "a job",
  );
  assert.equal(pluginCollectable({ ...empty, EmptySince: 0 }, 9_000, 1), false);
});

test("plugin gc: an empty plugin is removed only after the threshold; one back in use is kept", async () => {
  let now = 10_000;
  const s = new SqliteStateStore(null, { now: () => now });
  const gc = new GarbageCollector(s, nullLogger, { pluginThresholdMs: 60_000 });
  await s.txn((tx) => {
    tx.putNode(
      makeNode("n1", {
        CSIControllerPlugins: { p1: controllerInfo("p1"), p2: controllerInfo("p2") },
        CSINodePlugins: { p1: nodePluginInfo("p1") },
      }),
    );
  });
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, CSIControllerPlugins: {}, CSINodePlugins: {} }));
  assert.equal(s.getPlugin("p1")!.EmptySince, 10_000);
  assert.deepEqual((await gc.collect(69_999)).plugins, [], "before the threshold");
  assert.ok(s.getPlugin("p1") && s.getPlugin("p2"));

  // p2 comes back before the threshold: its clock is reset and it survives the next pass.
  now = 50_000;
  await s.txn((tx) =>
    tx.putNode({ ...tx.getNode("n1")!, CSIControllerPlugins: { p2: controllerInfo("p2") } }),
  );
  assert.deepEqual((await gc.collect(70_000)).plugins, ["p1"]);
  assert.equal(s.getPlugin("p1"), undefined);
  assert.deepEqual(
    [s.getPlugin("p2")!.ControllersHealthy, s.getPlugin("p2")!.ControllersExpected],
    [1, 0],
    "back, with an instance no job declares",
  );

  // A plugin job registered after collection creates the record again.
  await s.txn((tx) => tx.putJob(pluginJob("again")));
  assert.equal(s.getPlugin("p1")!.NodeJobs.default!.again!.Expected, 2);
  assert.deepEqual((await gc.collect(10_000_000)).plugins, [], "a declared plugin is never collected");
  s.close();
});

test("plugin gc: a plugin whose last instance was on a collected node goes a threshold later", async () => {
  let now = 0;
  const s = new SqliteStateStore(null, { now: () => now });
  const gc = new GarbageCollector(s, nullLogger, { nodeThresholdMs: 1_000, pluginThresholdMs: 5_000 });
  await s.txn((tx) =>
    tx.putNode(makeNode("n1", { Status: "down", CSINodePlugins: { p1: nodePluginInfo("p1") } })),
  );
  now = 2_000;
  assert.deepEqual(await gc.collect(2_000), { ...NOTHING, nodes: ["n1"] });
  assert.equal(s.getPlugin("p1")!.EmptySince, 2_000);
  assert.deepEqual((await gc.collect(7_000)).plugins, ["p1"]);
  s.close();
});

test("plugin jobs: an older state file gains the job associations on open", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-plugin-jobs-"));
  const current = path.join(dir, "current");
  mkdirSync(current);
  try {
    const s = new SqliteStateStore(current);
    await s.txn((tx) => {
      tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
      tx.putJob(pluginJob("hostpath"));
    });
    s.close();
    // Schema v1, as a server before plugin jobs left it.
    writeOldStateFile(current, dir, 1, V1_COLUMNS, (db: Database.Database) => {
      const row = db.prepare("SELECT json FROM plugins WHERE id = 'p1'").get() as { json: string };
      const {
        ControllerJobs: _c,
        NodeJobs: _n,
        EmptySince: _e,
        ...old
      } = JSON.parse(row.json) as Record<string, unknown>;
      db.prepare("UPDATE plugins SET json = ? WHERE id = 'p1'").run(JSON.stringify(old));
    });

    const again = new SqliteStateStore(dir);
    const p = again.getPlugin("p1")!;
    assert.deepEqual([p.NodeJobs.default!.hostpath!.Expected, p.EmptySince], [2, 0]);
    await again.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, CSINodePlugins: {} }));
    assert.equal(again.getPlugin("p1")!.EmptySince, 0, "the stored job still declares it");
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
