/**
 * The rows a restore writes: every carried table of the image (image.ts) in place of the live
 * state's, and the indexes moved to the restore's index.
 *
 * Indexes: every record keeps the CreateIndex and ModifyIndex it had in the snapshot; the store's
 * write index and every table's index become `index`, above both the snapshot's and the live
 * store's, so the write index never goes back, and every blocking query (whatever index it holds)
 * and every follower of deltas (node deletions: `nodes_deleted`) sees a change and reads again.
 */
import type Database from "better-sqlite3";
import { TABLES } from "../tables.js";
import { carriedTables, columnsOf, tableRows } from "./image.js";
import { snapshotError } from "./format.js";

/** Table → rows in the live schema's column order. */
export type Rows = Map<string, unknown[][]>;

/**
 * The image's rows laid out as `live`'s tables (columns matched by name). A live table the image
 * lacks, or whose columns differ, refuses the restore: the image is not this berth's schema.
 */
export function rowsForLive(live: Database.Database, image: Database.Database): Rows {
  const have = new Set(carriedTables(image));
  const out: Rows = new Map();
  for (const table of carriedTables(live)) {
    if (!have.has(table)) throw snapshotError(`its state lacks the table ${table}`);
    const liveCols = columnsOf(live, table);
    const { columns, rows } = tableRows(image, table);
    const at = liveCols.map((c) => columns.indexOf(c));
    if (at.some((i) => i < 0) || columns.length !== liveCols.length) {
      throw snapshotError(`its table ${table} has other columns than this berth's`);
    }
    out.set(
      table,
      rows.map((r) => at.map((i) => r[i])),
    );
  }
  return out;
}

/** Sets the store's index, every table's, and the node-deletion mark to `index` in `rows`. */
export function stampIndexes(rows: Rows, index: number): void {
  const meta = (rows.get("meta") ?? []).filter((r) => r[0] !== "index" && r[0] !== "nodes_deleted");
  meta.push(["index", index], ["nodes_deleted", index]);
  rows.set("meta", meta);
  rows.set(
    "table_index",
    TABLES.map((t) => [t, index]),
  );
}

/** Deletes every carried row of `live` and inserts `rows` (inside the caller's transaction). */
export function writeRows(live: Database.Database, rows: Rows): void {
  for (const table of carriedTables(live)) live.prepare(`DELETE FROM "${table}"`).run();
  for (const [table, list] of rows) {
    const cols = columnsOf(live, table);
    const insert = live.prepare(
      `INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
    );
    for (const r of list) insert.run(r);
  }
}
