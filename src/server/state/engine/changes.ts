/**
 * What changed since an index (StateStore's ChangeReader), for the loops that follow the store by
 * deltas (the volumewatcher): volumes, allocs and nodes looked up by their records' ModifyIndex
 * through an index on it, so a pass costs O(changed · log n), never a whole-table read.
 *
 * The indexes are on an expression of the stored JSON, so no write path has to fill a column: the
 * writers stay as they are and SQLite keeps the index. The expression is guarded by json_valid so
 * a record that is not JSON (one the open-time check will quarantine) never fails the migration or
 * a write; such a record indexes as -1 and is never listed.
 *
 * Deletions leave no record to list, so the nodes' are counted apart: every txn that deletes a
 * node sets the meta row `nodes_deleted` to its index (nodesDeletedAt). The row is a row like any
 * other, so the etcd store's replicas receive it with the deletion. Databases older than the row
 * start at 0: a follower always begins with a whole read, after which every deletion is recorded.
 */
import type Database from "better-sqlite3";

/** The indexed expression; queries must spell it exactly so, or SQLite will not use the index. */
const MODIFY_INDEX = "iif(json_valid(json), json_extract(json, '$.ModifyIndex'), -1)";

/** The schema step that adds the indexes (schema.ts MIGRATIONS). */
export const CHANGE_INDEXES_MIGRATION = `
  CREATE INDEX volumes_by_modify_index ON volumes (${MODIFY_INDEX});
  CREATE INDEX allocs_by_modify_index ON allocs (${MODIFY_INDEX});
  CREATE INDEX nodes_by_modify_index ON nodes (${MODIFY_INDEX});
`;

export function prepareChangeStatements(db: Database.Database) {
  return {
    volumes: db.prepare(`SELECT json FROM volumes WHERE ${MODIFY_INDEX} > ? ORDER BY ${MODIFY_INDEX}`),
    allocIds: db.prepare(`SELECT id FROM allocs WHERE ${MODIFY_INDEX} > ? ORDER BY ${MODIFY_INDEX}`),
    nodeIds: db.prepare(`SELECT id FROM nodes WHERE ${MODIFY_INDEX} > ? ORDER BY ${MODIFY_INDEX}`),
    nodesDeletedAt: db.prepare("SELECT value FROM meta WHERE key = 'nodes_deleted'").pluck(),
    markNodesDeleted: db.prepare(
      "INSERT INTO meta (key, value) VALUES ('nodes_deleted', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ),
  };
}

export type ChangeStatements = ReturnType<typeof prepareChangeStatements>;

export function idsModifiedSince(stmt: Database.Statement, index: number): string[] {
  return (stmt.all(index) as { id: string }[]).map((r) => r.id);
}
