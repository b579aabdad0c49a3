/**
 * ControllersExpected / NodesExpected as the store keeps them: what the jobs that declare the
 * plugin expect to run (a service job's Count, a system job's live allocs), not how many instances
 * report, so an instance that died shows as Healthy below Expected on the plugin and its volumes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { NodeConnections } from "../../../src/server/clientconn/connections.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { VolumeEndpoint } from "../../../src/server/rpc/volume.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateReader } from "../../../src/server/state/store.js";
import { volumeView } from "../../../src/server/state/views.js";
import type { Allocation, ClientStatus, DesiredStatus } from "../../../src/structs/alloc.js";
import type { BerthError } from "../../../src/structs/errors.js";
import type { Job } from "../../../src/structs/job.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";
import { V2_COLUMNS, writeOldStateFile } from "../../builders/old_state.js";

type Side = "controller" | "node" | "monolith";

function pluginJob(id: string, type: string, groups: [name: string, count: number, side: Side][]): Job {
  return validateJob({
    ID: id,
    Type: type,
    TaskGroups: groups.map(([name, count, side]) => ({
      Name: name,
      Count: count,
      Tasks: [
        { Name: "plugin", Driver: "raw_exec", CSIPluginConfig: { ID: "p1", Type: side, MountDir: "/csi" } },
      ],
    })),
  });
}

function alloc(
  id: string,
  job: Job,
  group: string,
  nodeId: string,
  status: { client?: ClientStatus; desired?: DesiredStatus } = {},
): Allocation {
  return {
    ID: id,
    Namespace: job.Namespace,
    Name: `${job.ID}.${group}[0]`,
    NodeID: nodeId,
    NodeName: nodeId,
    JobID: job.ID,
    Job: job,
    TaskGroup: group,
    DesiredStatus: status.desired ?? "run",
    DesiredDescription: "",
    ClientStatus: status.client ?? "pending",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: 0,
    ModifyTime: 0,
  };
}

/** [ControllersHealthy, ControllersExpected, NodesHealthy, NodesExpected] of plugin p1. */
function counts(state: StateReader): number[] {
  const p = state.getPlugin("p1")!;
  return [p.ControllersHealthy, p.ControllersExpected, p.NodesHealthy, p.NodesExpected];
}

test("plugin expected: a service job expects its groups' Count before any instance reports", async () => {
  const s = new SqliteStateStore(null);
  await s.txn((tx) =>
    tx.putJob(
      pluginJob("csi", "service", [
        ["controller", 1, "controller"],
        ["nodes", 3, "node"],
      ]),
    ),
  );
  assert.deepEqual(counts(s), [0, 1, 0, 3]);
  await s.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
    tx.putNode(makeNode("n2", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putNode(makeNode("n3", { CSINodePlugins: { p1: nodePluginInfo("p1", { Healthy: false }) } }));
  });
  assert.deepEqual(counts(s), [1, 1, 1, 3], "one node instance unhealthy, one not reporting at all");
  // Scaling the group moves Expected; the instances do not.
  const job = s.getJob("default", "csi")!;
  await s.txn((tx) =>
    tx.putJob({
      ...job,
      TaskGroups: job.TaskGroups.map((g) => (g.Name === "nodes" ? { ...g, Count: 2 } : g)),
    }),
  );
  assert.deepEqual(counts(s), [1, 1, 1, 2]);
  s.close();
});

test("plugin expected: a system job expects its live allocs, on 2 nodes, as they are placed and stop", async () => {
  const s = new SqliteStateStore(null);
  const job = await s.txn((tx) => tx.putJob(pluginJob("csi-nodes", "system", [["nodes", 1, "node"]])));
  assert.deepEqual(counts(s), [0, 0, 0, 0]);
  assert.equal(s.getPlugin("p1")!.NodeJobs.default!["csi-nodes"]!.Expected, 0, "declared, none placed");
  assert.equal(s.getPlugin("p1")!.EmptySince, 0, "the job keeps it alive");

  // One scheduler pass places an alloc on each node; the txn sees its own writes.
  const seen = await s.txn((tx) => {
    tx.putAlloc(alloc("a1", job, "nodes", "n1"));
    tx.putAlloc(alloc("a2", job, "nodes", "n2"));
    tx.putAlloc(alloc("other", job, "unrelated", "n1"));
    return tx.getPlugin("p1")!.NodesExpected;
  });
  assert.equal(seen, 2);
  assert.deepEqual(counts(s), [0, 0, 0, 2], "allocs on 2 nodes");

  const idx = s.tableIndex("plugins");
  await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a1")!, ClientStatus: "running" }));
  assert.equal(s.tableIndex("plugins"), idx, "pending → running leaves the plugin as it is");

  await s.txn((tx) =>
    tx.putAlloc({ ...tx.getAlloc("a2")!, DesiredStatus: "stop", ClientStatus: "complete" }),
  );
  assert.deepEqual(counts(s), [0, 0, 0, 1], "a terminal alloc expects nothing");
  await s.txn((tx) => tx.putAlloc(alloc("a3", job, "nodes", "n3", { desired: "stop" })));
  assert.deepEqual(counts(s), [0, 0, 0, 1], "stopped before it ran: terminal");
  await s.txn((tx) => tx.deleteAlloc("a1"));
  assert.deepEqual(counts(s), [0, 0, 0, 0], "garbage collected");
  s.close();
});

test("plugin expected: a monolith counts on both sides, for a service and for a system job", async () => {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => tx.putJob(pluginJob("mono", "service", [["mono", 2, "monolith"]])));
  assert.deepEqual(counts(s), [0, 2, 0, 2]);
  await s.txn((tx) => tx.deleteJob("default", "mono"));
  const sys = await s.txn((tx) => tx.putJob(pluginJob("mono", "system", [["mono", 1, "monolith"]])));
  await s.txn((tx) => {
    tx.putAlloc(alloc("a1", sys, "mono", "n1", { client: "running" }));
    tx.putNode(
      makeNode("n1", {
        CSIControllerPlugins: { p1: controllerInfo("p1") },
        CSINodePlugins: { p1: nodePluginInfo("p1") },
      }),
    );
  });
  assert.deepEqual(counts(s), [1, 1, 1, 1]);
  s.close();
});

test("plugin expected: a stopped or purged job expects nothing; its allocs no longer count", async () => {
  const s = new SqliteStateStore(null);
  const svc = await s.txn((tx) => tx.putJob(pluginJob("ctrl", "service", [["controller", 2, "controller"]])));
  const sys = await s.txn((tx) => tx.putJob(pluginJob("nodes", "system", [["nodes", 1, "node"]])));
  await s.txn((tx) => tx.putAlloc(alloc("a1", sys, "nodes", "n1", { client: "running" })));
  assert.deepEqual(counts(s), [0, 2, 0, 1]);

  await s.txn((tx) => tx.putJob({ ...svc, Stop: true }));
  assert.deepEqual(counts(s), [0, 0, 0, 1]);
  await s.txn((tx) => tx.putJob({ ...sys, Stop: true }));
  assert.deepEqual(counts(s), [0, 0, 0, 0], "stopped while its alloc still runs");
  await s.txn((tx) => tx.putJob({ ...sys, Stop: false, Version: 1 }));
  assert.deepEqual(counts(s), [0, 0, 0, 1], "running again: the live alloc counts again");
  await s.txn((tx) => tx.deleteJob("default", "nodes"));
  assert.deepEqual(counts(s), [0, 0, 0, 0], "purged");
  await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a1")!, ClientStatus: "complete" }));
  assert.deepEqual([s.getPlugin("p1")!.NodeJobs, s.getPlugin("p1")!.ControllerJobs], [{}, {}]);
  s.close();
});

test("plugin expected: an instance that died keeps Expected and drops Healthy, on the plugin and its volumes", async () => {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putJob(pluginJob("csi", "service", [["nodes", 1, "node"]]));
    tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putVolume(makeVolume("vol1"));
  });
  assert.deepEqual(counts(s), [0, 0, 1, 1]);
  assert.equal(volumeView(s, "default", "vol1")!.Schedulable, true);

  // The node agent stops reporting the instance (its task died): 0/1, not 0/0.
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, CSINodePlugins: {} }));
  assert.deepEqual(counts(s), [0, 0, 0, 1]);
  const v = volumeView(s, "default", "vol1")!;
  assert.deepEqual([v.NodesHealthy, v.NodesExpected, v.Schedulable], [0, 1, false]);
  assert.equal(s.getPlugin("p1")!.EmptySince, 0);

  // The same for a system job whose alloc still runs while its plugin task restarts.
  const sys = await s.txn((tx) => tx.putJob(pluginJob("sys", "system", [["nodes", 1, "node"]])));
  await s.txn((tx) => {
    tx.putAlloc(alloc("a2", sys, "nodes", "n2", { client: "running" }));
    tx.putNode(makeNode("n2", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
  });
  assert.deepEqual(counts(s), [0, 0, 1, 2]);
  await s.txn((tx) => tx.putNode({ ...tx.getNode("n2")!, CSINodePlugins: {} }));
  assert.deepEqual(counts(s), [0, 0, 0, 2]);
  s.close();
});

test("plugin expected: volume create refuses a plugin with no controller side, not one whose controller is down", async () => {
  const store = new SqliteStateStore(null);
  const conns = new NodeConnections();
  const deps = {
    store,
    scheduler: new Scheduler(store, nullLogger),
    conns,
    controllers: new ControllerClient(store, conns, nullLogger),
    volumeLocks: new KeyedMutex(),
    log: nullLogger,
  };
  const volumes = new VolumeEndpoint(deps);
  await store.txn((tx) => {
    tx.putJob(pluginJob("nodes", "service", [["nodes", 1, "node"]]));
    tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
  });
  const create = () => volumes.create([makeVolume("vol1", { ExternalID: "" })]);
  await assert.rejects(create(), (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED");

  // A controller that a job expects but that is not running: the controller call answers.
  await store.txn((tx) => tx.putJob(pluginJob("ctrl", "service", [["controller", 1, "controller"]])));
  await assert.rejects(create(), (e: BerthError) => e.code === "ERR_CSI_PLUGIN_UNAVAILABLE");
  store.close();
});

test("plugin expected: an older state file gets the jobs' expected counts on open", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-plugin-expected-"));
  const current = path.join(dir, "current");
  mkdirSync(current);
  try {
    const s = new SqliteStateStore(current);
    await s.txn((tx) => {
      const sys = tx.putJob(pluginJob("sys", "system", [["nodes", 1, "node"]]));
      tx.putJob(pluginJob("ctrl", "service", [["controller", 2, "controller"]]));
      tx.putAlloc(alloc("a1", sys, "nodes", "n1", { client: "running" }));
      tx.putAlloc(alloc("a2", sys, "nodes", "n2", { client: "running" }));
      tx.putAlloc(alloc("a3", sys, "nodes", "n3", { client: "failed" }));
      tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    });
    s.close();
    // Schema v2, as a server that counted instances left it: allocs without their group and
    // liveness, plugin uses with one count per side, Expected = the instances that report.
    writeOldStateFile(current, dir, 2, V2_COLUMNS, (db: Database.Database) => {
      const oldUse = (jobId: string, c: number, n: number) =>
        JSON.stringify({
          pluginId: "p1",
          namespace: "default",
          jobId,
          version: 0,
          controllerExpected: c,
          nodeExpected: n,
        });
      db.prepare("UPDATE plugin_jobs SET json = ? WHERE job_id = 'sys'").run(oldUse("sys", 0, 1));
      db.prepare("UPDATE plugin_jobs SET json = ? WHERE job_id = 'ctrl'").run(oldUse("ctrl", 2, 0));
      const row = db.prepare("SELECT json FROM plugins WHERE id = 'p1'").get() as { json: string };
      db.prepare("UPDATE plugins SET json = ? WHERE id = 'p1'").run(
        JSON.stringify({ ...JSON.parse(row.json), ControllersExpected: 0, NodesExpected: 1 }),
      );
    });

    const again = new SqliteStateStore(dir);
    assert.deepEqual(counts(again), [0, 2, 1, 2], "the system job's 2 live allocs, the service job's Count");
    await again.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a2")!, ClientStatus: "lost" }));
    assert.deepEqual(counts(again), [0, 2, 1, 1], "allocs stored before keep counting after");
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
