/**
 * The SQLite statements of plugin capacities (structs/capacity.ts PluginCapacity): what the
 * leader's capacity poll measured, one row per plugin. The rows are kept beside their plugin, as
 * plugin instances are: a write counts as a write of the `plugins` table (a blocking query on
 * plugins wakes) and the commit feed does not report them. The etcd store replicates them with every
 * other row; a snapshot carries them.
 */
import type Database from "better-sqlite3";

/** The migration that creates the table (schema.ts). */
export const PLUGIN_CAPACITY_MIGRATION = `
  CREATE TABLE plugin_capacity (plugin_id TEXT PRIMARY KEY, json TEXT NOT NULL);
`;

export function prepareCapacityStatements(db: Database.Database) {
  return {
    get: db.prepare("SELECT json FROM plugin_capacity WHERE plugin_id = ?"),
    list: db.prepare("SELECT json FROM plugin_capacity ORDER BY plugin_id"),
    put: db.prepare(
      "INSERT INTO plugin_capacity (plugin_id, json) VALUES (?, ?) ON CONFLICT(plugin_id) DO UPDATE SET json = excluded.json",
    ),
    del: db.prepare("DELETE FROM plugin_capacity WHERE plugin_id = ?"),
  };
}

export type CapacityStatements = ReturnType<typeof prepareCapacityStatements>;
