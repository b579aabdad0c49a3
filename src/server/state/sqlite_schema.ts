/**
 * The SQLite schema. Records are stored as JSON with the columns their lookups need indexed.
 * `user_version` versions it; each migration moves one version forward inside a transaction.
 */
import type Database from "better-sqlite3";

const MIGRATIONS: string[] = [
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
];

export function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    const sql = MIGRATIONS[v];
    if (sql === undefined) break;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
