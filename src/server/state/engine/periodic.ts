/**
 * The SQLite statements of periodic launches (structs/periodic.ts PeriodicLaunch, Nomad's
 * `periodic_launch` table): the last launch time of each periodic job, one row per job, written in
 * the same transaction as the child it launched (or as the job's first register). The rows are kept
 * beside their job, as job versions are: a write counts as a write of the `jobs` table, and the
 * commit feed does not report them. The etcd store replicates them with every other row.
 */
import type Database from "better-sqlite3";

/** The migration that creates the table (schema.ts). */
export const PERIODIC_LAUNCHES_MIGRATION = `
  CREATE TABLE periodic_launches (
    namespace TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (namespace, id)
  );
`;

export function preparePeriodicStatements(db: Database.Database) {
  return {
    get: db.prepare("SELECT json FROM periodic_launches WHERE namespace = ? AND id = ?"),
    put: db.prepare(
      "INSERT INTO periodic_launches (namespace, id, json) VALUES (?, ?, ?) ON CONFLICT(namespace, id) DO UPDATE SET json = excluded.json",
    ),
    del: db.prepare("DELETE FROM periodic_launches WHERE namespace = ? AND id = ?"),
  };
}

export type PeriodicStatements = ReturnType<typeof preparePeriodicStatements>;
