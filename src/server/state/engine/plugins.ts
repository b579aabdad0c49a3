/**
 * How the SQLite store keeps plugins: one small row per plugin (`plugins.json`, a CSIPluginSummary:
 * counts, jobs, provider, flags) and one row per (plugin, node) with that node's instances
 * (`plugin_instances`: the controller and node CSIInfo as counted, instanceOnNode, plus the columns
 * the hot lookups need indexed). A node write touches the rows of the plugins on that node and
 * their summaries, O(log n) each; only the full record (getPlugin, the plugin API) reads every
 * instance of a plugin.
 */
import type Database from "better-sqlite3";
import {
  buildPlugin,
  instanceIdentity,
  stampEmptySince,
  summaryOf,
  withInstances,
  type CSIInfo,
  type CSIPlugin,
  type CSIPluginSummary,
} from "../../../structs/plugin.js";
import type { NodeInstances } from "./derive_plugins.js";

export type PluginSide = "controller" | "node";

export function preparePluginStatements(db: Database.Database) {
  return {
    getSummary: db.prepare("SELECT json FROM plugins WHERE id = ?"),
    listSummaries: db.prepare("SELECT json FROM plugins ORDER BY id"),
    instancesOf: db.prepare(
      "SELECT node_id, controller, node FROM plugin_instances WHERE plugin_id = ? ORDER BY node_id",
    ),
    healthyControllers: db.prepare(
      "SELECT node_id, controller AS info FROM plugin_instances WHERE plugin_id = ? AND controller_healthy = 1 ORDER BY node_id",
    ),
    healthyNodes: db.prepare(
      "SELECT node_id, node AS info FROM plugin_instances WHERE plugin_id = ? AND node_healthy = 1 ORDER BY node_id",
    ),
    // A page of the same index after a node ID (healthyInstancesAfter): O(log n + limit).
    healthyControllersAfter: db.prepare(
      "SELECT node_id, controller AS info FROM plugin_instances WHERE plugin_id = ? AND controller_healthy = 1 AND node_id > ? ORDER BY node_id LIMIT ?",
    ),
    healthyNodesAfter: db.prepare(
      "SELECT node_id, node AS info FROM plugin_instances WHERE plugin_id = ? AND node_healthy = 1 AND node_id > ? ORDER BY node_id LIMIT ?",
    ),
    putInstance: db.prepare(
      `INSERT INTO plugin_instances (plugin_id, node_id, controller, node, controller_healthy, node_healthy, provider, version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(plugin_id, node_id) DO UPDATE SET controller = excluded.controller, node = excluded.node,
         controller_healthy = excluded.controller_healthy, node_healthy = excluded.node_healthy,
         provider = excluded.provider, version = excluded.version`,
    ),
    delInstance: db.prepare("DELETE FROM plugin_instances WHERE plugin_id = ? AND node_id = ?"),
    // pluginIdentity's rule from the (plugin_id, node_id) primary key: the greatest node ID that
    // reports one, found by walking the plugin's rows backwards (the first row nearly always has it).
    lastProvider: db.prepare(
      "SELECT provider FROM plugin_instances WHERE plugin_id = ? AND provider <> '' ORDER BY node_id DESC LIMIT 1",
    ),
    lastVersion: db.prepare(
      "SELECT version FROM plugin_instances WHERE plugin_id = ? AND version <> '' ORDER BY node_id DESC LIMIT 1",
    ),
  };
}

export type PluginStatements = ReturnType<typeof preparePluginStatements>;

type InstanceRow = { node_id: string; controller: string | null; node: string | null };

/** The columns of one (plugin, node) row after the plugin and node IDs. */
export function instanceColumns(inst: Omit<NodeInstances, "nodeId">) {
  const json = (i: CSIInfo | undefined) => (i ? JSON.stringify(i) : null);
  const id = instanceIdentity(inst);
  return [
    json(inst.controller),
    json(inst.node),
    inst.controller?.Healthy ? 1 : 0,
    inst.node?.Healthy ? 1 : 0,
    id.Provider,
    id.Version,
  ] as const;
}

/** Writes (or, with neither side, deletes) one node's instances of one plugin. */
export function writeInstance(st: PluginStatements, pluginId: string, inst: NodeInstances): void {
  if (inst.controller || inst.node) st.putInstance.run(pluginId, inst.nodeId, ...instanceColumns(inst));
  else st.delInstance.run(pluginId, inst.nodeId);
}

/** The plugin's Provider / Version as pluginIdentity picks them, from the index. */
export function identityOf(st: PluginStatements, pluginId: string): { Provider: string; Version: string } {
  const p = st.lastProvider.get(pluginId) as { provider: string } | undefined;
  const v = st.lastVersion.get(pluginId) as { version: string } | undefined;
  return { Provider: p?.provider ?? "", Version: v?.version ?? "" };
}

export function readSummary(st: PluginStatements, id: string): CSIPluginSummary | undefined {
  const row = st.getSummary.get(id) as { json: string } | undefined;
  return row && (JSON.parse(row.json) as CSIPluginSummary);
}

export function listSummaries(st: PluginStatements): CSIPluginSummary[] {
  return (st.listSummaries.all() as { json: string }[]).map((r) => JSON.parse(r.json) as CSIPluginSummary);
}

/** Every node's instances of the plugin, in node ID order. */
function instanceEntries(
  st: PluginStatements,
  id: string,
): { nodeId: string; controller?: CSIInfo; node?: CSIInfo }[] {
  return (st.instancesOf.all(id) as InstanceRow[]).map(entryOf);
}

function entryOf(r: InstanceRow): { nodeId: string; controller?: CSIInfo; node?: CSIInfo } {
  return {
    nodeId: r.node_id,
    controller: r.controller ? (JSON.parse(r.controller) as CSIInfo) : undefined,
    node: r.node ? (JSON.parse(r.node) as CSIInfo) : undefined,
  };
}

/** The full record: the summary with every instance, O(instances of the plugin). */
export function readPlugin(st: PluginStatements, id: string): CSIPlugin | undefined {
  const summary = readSummary(st, id);
  if (!summary) return undefined;
  const Controllers: Record<string, CSIInfo> = {};
  const Nodes: Record<string, CSIInfo> = {};
  for (const e of instanceEntries(st, id)) {
    if (e.controller) Controllers[e.nodeId] = e.controller;
    if (e.node) Nodes[e.nodeId] = e.node;
  }
  return withInstances(summary, Controllers, Nodes);
}

/** Node ID → the healthy instance of that side, from the (plugin, healthy) index. */
export function healthyInstances(st: PluginStatements, id: string, side: PluginSide): Map<string, CSIInfo> {
  const stmt = side === "controller" ? st.healthyControllers : st.healthyNodes;
  const out = new Map<string, CSIInfo>();
  for (const r of stmt.all(id) as { node_id: string; info: string }[]) {
    out.set(r.node_id, JSON.parse(r.info) as CSIInfo);
  }
  return out;
}

/** Up to `limit` healthy instances of that side on nodes after `afterNodeId`, in node ID order. */
export function healthyInstancesAfter(
  st: PluginStatements,
  id: string,
  side: PluginSide,
  afterNodeId: string,
  limit: number,
): [string, CSIInfo][] {
  const stmt = side === "controller" ? st.healthyControllersAfter : st.healthyNodesAfter;
  const rows = stmt.all(id, afterNodeId, limit) as { node_id: string; info: string }[];
  return rows.map((r) => [r.node_id, JSON.parse(r.info) as CSIInfo]);
}

/**
 * The migration to summaries and indexed instances: the instance rows gain their health, provider
 * and version columns and the indexes the hot lookups use; each plugin row becomes its summary,
 * its instance-derived fields counted from its instance rows (which every earlier version wrote in
 * the same transaction as the record), its jobs, indexes and times kept. A record that does not
 * parse is left for the quarantine check that follows the migrations.
 */
export function migratePluginSummaries(db: Database.Database, nowMs = Date.now()): void {
  db.exec(`
    ALTER TABLE plugin_instances ADD COLUMN controller_healthy INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE plugin_instances ADD COLUMN node_healthy INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE plugin_instances ADD COLUMN provider TEXT NOT NULL DEFAULT '';
    ALTER TABLE plugin_instances ADD COLUMN version TEXT NOT NULL DEFAULT '';
  `);
  const setColumns = db.prepare(
    "UPDATE plugin_instances SET controller_healthy = ?, node_healthy = ?, provider = ?, version = ? WHERE plugin_id = ? AND node_id = ?",
  );
  const rows = db
    .prepare("SELECT plugin_id, node_id, controller, node FROM plugin_instances")
    .all() as (InstanceRow & {
    plugin_id: string;
  })[];
  for (const r of rows) {
    let entry;
    try {
      entry = entryOf(r);
    } catch {
      continue; // rederived from its node by the quarantine check
    }
    const [, , ch, nh, provider, version] = instanceColumns(entry);
    setColumns.run(ch, nh, provider, version, r.plugin_id, r.node_id);
  }
  db.exec(`
    CREATE INDEX plugin_instances_healthy_controllers ON plugin_instances (plugin_id, controller_healthy, node_id);
    CREATE INDEX plugin_instances_healthy_nodes ON plugin_instances (plugin_id, node_healthy, node_id);
    CREATE INDEX plugin_instances_by_node ON plugin_instances (node_id);
  `);
  const st = preparePluginStatements(db);
  const put = db.prepare("UPDATE plugins SET json = ? WHERE id = ?");
  for (const row of db.prepare("SELECT id, json FROM plugins").all() as { id: string; json: string }[]) {
    let summary: CSIPluginSummary;
    try {
      const p = JSON.parse(row.json) as CSIPlugin;
      const stamps = { CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex };
      const built = buildPlugin(row.id, instanceEntries(st, row.id), [], stamps);
      const full: CSIPlugin = {
        ...p,
        Provider: built.Provider,
        Version: built.Version,
        ControllerRequired: built.ControllerRequired,
        Controllers: built.Controllers,
        Nodes: built.Nodes,
        ControllersHealthy: built.ControllersHealthy,
        NodesHealthy: built.NodesHealthy,
      };
      summary = stampEmptySince(summaryOf(full), p, nowMs);
    } catch {
      continue;
    }
    put.run(JSON.stringify(summary), row.id);
  }
}
