/**
 * Ordered runs of the volume, job and node tables for the paged lists (StateStore.volumeRange,
 * jobRange, nodeRange): read from each table's primary-key index with a LIMIT, so a page costs
 * O(log n + page), not a scan and parse of every stored record.
 */
import type Database from "better-sqlite3";
import type { RecordRange } from "../store.js";
import { parseRows } from "./statements.js";

/**
 * Above every stored ID: IDs are ASCII (structs/ids.ts) and SQLite compares text as UTF-8 bytes,
 * where U+FFFF (EF BF BF) sorts after any ASCII character.
 */
const TOP = "\uffff";

export type RangeTable = "volumes" | "jobs" | "nodes";

function rangeSql(table: RangeTable, order: "ASC" | "DESC", byPlugin: boolean): string {
  // `+plugin_id` keeps the planner on the primary key (ordered, stops at LIMIT) instead of
  // volumes_by_plugin, which would read and sort every volume of the plugin for each page.
  return (
    `SELECT json FROM ${table} WHERE ` +
    (table === "nodes" ? "" : "namespace = ? AND ") +
    "id >= ? AND id <= ?" +
    (byPlugin ? " AND +plugin_id = ?" : "") +
    ` ORDER BY id ${order} LIMIT ?`
  );
}

function namespaceSql(table: RangeTable, after: boolean): string {
  return `SELECT namespace FROM ${table}${after ? " WHERE namespace > ?" : ""} ORDER BY namespace LIMIT 1`;
}

function tableStatements(db: Database.Database, table: RangeTable) {
  return {
    asc: db.prepare(rangeSql(table, "ASC", false)),
    desc: db.prepare(rangeSql(table, "DESC", false)),
    ascPlugin: table === "volumes" ? db.prepare(rangeSql(table, "ASC", true)) : undefined,
    descPlugin: table === "volumes" ? db.prepare(rangeSql(table, "DESC", true)) : undefined,
    firstNamespace: table === "nodes" ? undefined : db.prepare(namespaceSql(table, false)),
    nextNamespace: table === "nodes" ? undefined : db.prepare(namespaceSql(table, true)),
  };
}

export function preparePageStatements(db: Database.Database) {
  return {
    volumes: tableStatements(db, "volumes"),
    jobs: tableStatements(db, "jobs"),
    nodes: tableStatements(db, "nodes"),
  };
}

export type PageStatements = ReturnType<typeof preparePageStatements>;

/** The stored records of one run of `q` (volumes not opened: the reader opens sealed secrets). */
export function rangeRows<T extends { ID: string }>(
  s: PageStatements,
  table: RangeTable,
  q: RecordRange,
): T[] {
  if (q.limit <= 0) return [];
  // Every ID starting with the prefix lies in [prefix, prefix + TOP].
  const lo = q.prefix;
  const hi = q.prefix + TOP;
  let from = lo;
  let to = hi;
  if (q.from !== "") {
    if (q.reverse) to = q.from < hi ? q.from : hi;
    else from = q.from > lo ? q.from : lo;
  }
  if (from > to) return [];
  const t = s[table];
  const args: (string | number)[] = table === "nodes" ? [from, to] : [q.namespace ?? "", from, to];
  let stmt = q.reverse ? t.desc : t.asc;
  if (q.pluginId !== undefined) {
    const byPlugin = q.reverse ? t.descPlugin : t.ascPlugin;
    if (!byPlugin) throw new Error(`no plugin range on ${table}`);
    args.push(q.pluginId);
    stmt = byPlugin;
  }
  args.push(q.limit);
  return parseRows<T>(stmt.all(...args)).filter((r) => r.ID.startsWith(q.prefix));
}

/** The namespaces that hold records of the table, ascending: one index seek each. */
export function rangeNamespaces(s: PageStatements, table: "volumes" | "jobs"): string[] {
  const { firstNamespace, nextNamespace } = s[table];
  const out: string[] = [];
  let row = firstNamespace?.get() as { namespace: string } | undefined;
  while (row) {
    out.push(row.namespace);
    row = nextNamespace?.get(row.namespace) as { namespace: string } | undefined;
  }
  return out;
}
