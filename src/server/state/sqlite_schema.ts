/**
 * The SQLite schema. Records are stored as JSON with the columns their lookups need indexed.
 * `user_version` versions it; each migration moves one version forward inside a transaction.
 */
import type Database from "better-sqlite3";
import type { Job } from "../../structs/job.js";
import type { CSIPlugin } from "../../structs/plugin.js";
import { jobDescriptions, jobPluginUses, type PluginJobUse } from "../../structs/plugin_jobs.js";

/** SQL, or a function for a step that must compute from the stored JSON. */
type Migration = string | ((db: Database.Database) => void);

const MIGRATIONS: Migration[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE table_index (name TEXT PRIMARY KEY, idx INTEGER NOT NULL);
  CREATE TABLE nodes (id TEXT PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE jobs (namespace TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (namespace, id));
  CREATE TABLE allocs (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, node_id TEXT NOT NULL, job_id TEXT NOT NULL, json TEXT NOT NULL
  );
  CREATE INDEX allocs_by_node ON allocs (node_id);
  CREATE INDEX allocs_by_job ON allocs (namespace, job_id);
  CREATE TABLE alloc_volumes (
    namespace TEXT NOT NULL, volume_id TEXT NOT NULL, alloc_id TEXT NOT NULL,
    PRIMARY KEY (namespace, volume_id, alloc_id)
  );
  CREATE INDEX alloc_volumes_by_alloc ON alloc_volumes (alloc_id);
  CREATE TABLE volumes (
    namespace TEXT NOT NULL, id TEXT NOT NULL, plugin_id TEXT NOT NULL, json TEXT NOT NULL,
    PRIMARY KEY (namespace, id)
  );
  CREATE INDEX volumes_by_plugin ON volumes (plugin_id);
  CREATE TABLE plugin_instances (
    plugin_id TEXT NOT NULL, node_id TEXT NOT NULL, controller TEXT, node TEXT,
    PRIMARY KEY (plugin_id, node_id)
  );
  CREATE TABLE plugins (id TEXT PRIMARY KEY, json TEXT NOT NULL);
  `,
  // v2: the jobs that declare each plugin (plugin_jobs.ts), filled from the jobs already stored,
  // and the plugin records' new fields (ControllerJobs, NodeJobs, EmptySince). Every plugin stored
  // before had an instance, so none is empty.
  (db) => {
    db.exec(`
      CREATE TABLE plugin_jobs (
        plugin_id TEXT NOT NULL, namespace TEXT NOT NULL, job_id TEXT NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY (plugin_id, namespace, job_id)
      );
      CREATE INDEX plugin_jobs_by_job ON plugin_jobs (namespace, job_id);
    `);
    const put = db.prepare(
      "INSERT INTO plugin_jobs (plugin_id, namespace, job_id, json) VALUES (?, ?, ?, ?)",
    );
    const byPlugin = new Map<string, PluginJobUse[]>();
    for (const row of db.prepare("SELECT json FROM jobs").all() as { json: string }[]) {
      for (const use of jobPluginUses(JSON.parse(row.json) as Job)) {
        put.run(use.pluginId, use.namespace, use.jobId, JSON.stringify(use));
        byPlugin.set(use.pluginId, [...(byPlugin.get(use.pluginId) ?? []), use]);
      }
    }
    const putPlugin = db.prepare("UPDATE plugins SET json = ? WHERE id = ?");
    for (const row of db.prepare("SELECT id, json FROM plugins").all() as { id: string; json: string }[]) {
      const p = JSON.parse(row.json) as CSIPlugin;
      const next = { ...p, ...jobDescriptions(byPlugin.get(row.id) ?? []), EmptySince: 0 };
      putPlugin.run(JSON.stringify(next), row.id);
    }
  },
];

export function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    const step = MIGRATIONS[v];
    if (step === undefined) break;
    db.transaction(() => {
      if (typeof step === "string") db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
