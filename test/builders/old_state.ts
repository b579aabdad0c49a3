/**
 * State files as a server at an older schema version left them, for migration tests. Built by
 * copying rows (only the columns that version has) from a file the current store wrote into a
 * file migrated only up to that version, so later migrations, whatever they add, run on open.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../../src/server/state/engine/schema.js";

/** Table → the comma-separated columns it has at the older version. */
export const V1_COLUMNS: Record<string, string> = {
  meta: "key, value",
  table_index: "name, idx",
  nodes: "id, json",
  jobs: "namespace, id, json",
  allocs: "id, namespace, node_id, job_id, json",
  alloc_volumes: "namespace, volume_id, alloc_id",
  volumes: "namespace, id, plugin_id, json",
  plugin_instances: "plugin_id, node_id, controller, node",
  plugins: "id, json",
};
export const V2_COLUMNS: Record<string, string> = {
  ...V1_COLUMNS,
  plugin_jobs: "plugin_id, namespace, job_id, json",
};

/**
 * Writes `toDir/state.db` at schema `version` with the rows of `fromDir/state.db` (closed), then
 * lets `edit` rewrite what that version stored differently.
 */
export function writeOldStateFile(
  fromDir: string,
  toDir: string,
  version: number,
  columns: Record<string, string>,
  edit: (db: Database.Database) => void = () => undefined,
): void {
  const db = new Database(path.join(toDir, "state.db"));
  try {
    migrate(db, version);
    db.prepare("ATTACH DATABASE ? AS cur").run(path.join(fromDir, "state.db"));
    db.transaction(() => {
      for (const [table, cols] of Object.entries(columns)) {
        // Older versions stored each alloc with its job copy (now apart: sqlite_alloc_jobs.ts).
        const from =
          table === "allocs"
            ? `${cols.replace(/\bjson\b/, "json_set(a.json, '$.Job', json(j.json))")} FROM cur.allocs a LEFT JOIN cur.alloc_jobs j ON j.key = a.job_key`
            : `${cols} FROM cur.${table}`;
        db.exec(`INSERT INTO main.${table} (${cols}) SELECT ${from}`);
      }
    })();
    db.exec("DETACH DATABASE cur");
    edit(db);
  } finally {
    db.close();
  }
}
