/**
 * A state file from before plugin summaries (each plugin row the full record with every node's
 * instance, instance rows without their health / provider columns) opens with summaries and
 * indexed instances: the plugin reads the same through the API's full record, the hot paths'
 * summary counts it, and the next writes move it by delta from there.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { buildPlugin, summaryOf } from "../../../src/structs/plugin.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { pluginJob } from "../../conformance/builders.js";

test("plugin summaries: an older state file's full plugin records become summaries on open", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-plugin-summary-"));
  try {
    const s = new SqliteStateStore(dir);
    await s.txn((tx) => {
      tx.putNode(
        makeNode("n1", {
          CSINodePlugins: { p1: nodePluginInfo("p1") },
          CSIControllerPlugins: { p1: controllerInfo("p1", true) },
        }),
      );
      tx.putNode(makeNode("n2", { CSINodePlugins: { p1: nodePluginInfo("p1", { Healthy: false }) } }));
      tx.putJob(pluginJob("plug", "p1", { count: 2 }));
    });
    const before = s.getPlugin("p1")!;
    s.close();

    // The file as the previous schema left it: the record whole, the instance rows bare.
    const db = new Database(path.join(dir, "state.db"));
    try {
      const version = db.pragma("user_version", { simple: true }) as number;
      // Four schema steps back: before plugin summaries, and so before allocs' job copies,
      // periodic launches and plugin capacities.
      db.exec(`
        DROP TABLE plugin_capacity;
        DROP TABLE periodic_launches;
        DROP INDEX allocs_by_job_key;
        ALTER TABLE allocs DROP COLUMN job_key;
        DROP TABLE alloc_jobs;
        DROP INDEX plugin_instances_healthy_controllers;
        DROP INDEX plugin_instances_healthy_nodes;
        DROP INDEX plugin_instances_by_node;
        ALTER TABLE plugin_instances DROP COLUMN controller_healthy;
        ALTER TABLE plugin_instances DROP COLUMN node_healthy;
        ALTER TABLE plugin_instances DROP COLUMN provider;
        ALTER TABLE plugin_instances DROP COLUMN version;
      `);
      const { EmptySince: _e, ...full } = before;
      db.prepare("UPDATE plugins SET json = ? WHERE id = 'p1'").run(
        JSON.stringify({ ...full, EmptySince: 0 }),
      );
      db.pragma(`user_version = ${version - 4}`);
    } finally {
      db.close();
    }

    const again = new SqliteStateStore(dir);
    try {
      assert.deepEqual(again.quarantined(), [], "nothing refused");
      assert.deepEqual(again.getPlugin("p1"), before, "the full record reads the same");
      const summary = again.pluginSummary("p1")!;
      assert.deepEqual(summary, summaryOf(before));
      assert.deepEqual(summary.Instances, { Controllers: 1, Nodes: 2, RequireController: 1 });
      assert.deepEqual([...again.healthyPluginInstances("p1", "node").keys()], ["n1"]);
      assert.deepEqual([...again.healthyPluginInstances("p1", "controller").keys()], ["n1"]);
      await again.txn((tx) =>
        tx.putNode({ ...tx.getNode("n2")!, CSINodePlugins: { p1: nodePluginInfo("p1") } }),
      );
      const after = again.getPlugin("p1")!;
      assert.equal(after.NodesHealthy, 2, "the next write moves the migrated counts");
      const rebuilt = buildPlugin(
        "p1",
        ["n1", "n2"].map((id) => ({
          nodeId: id,
          node: again.getNode(id)!.CSINodePlugins.p1!,
          ...(id === "n1" ? { controller: again.getNode(id)!.CSIControllerPlugins.p1! } : {}),
        })),
        [{ namespace: "default", jobId: "plug", version: 0, node: 2 }],
        {
          CreateIndex: after.CreateIndex,
          ModifyIndex: after.ModifyIndex,
          CreateTime: after.CreateTime!,
          ModifyTime: after.ModifyTime!,
        },
      );
      assert.deepEqual(summaryOf(after), { ...summaryOf(rebuilt), EmptySince: 0 });
    } finally {
      again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
