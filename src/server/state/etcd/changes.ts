/**
 * The commit feed (commit_feed.ts) of a replicated txn: its row ops on the record tables, as
 * CommittedChanges, the same the SQLite store reports (commit_recorder.ts). Index rows
 * (alloc_volumes, plugin_instances, plugin_jobs, meta) and job versions, kept beside their job, are
 * not reported; a record written twice in one txn appears once, as it was left, at the place of its
 * first write, and one the txn both created and deleted does not appear at all.
 */
import type { CommittedChange } from "../commit_feed.js";
import type { ReplicaRows, RowOp } from "./rows.js";
import type { Table } from "../store.js";

/** SQLite table → the store Table it holds, and how its key columns name a record. */
const RECORD_TABLES: Record<
  string,
  { table: Table; ns?: string; id: (k: Record<string, unknown>) => string }
> = {
  nodes: { table: "nodes", id: (k) => String(k.id) },
  jobs: { table: "jobs", ns: "namespace", id: (k) => String(k.id) },
  allocs: { table: "allocs", id: (k) => String(k.id) },
  volumes: { table: "volumes", ns: "namespace", id: (k) => String(k.id) },
  plugins: { table: "plugins", id: (k) => String(k.id) },
  evals: { table: "evals", id: (k) => String(k.id) },
  volume_intents: { table: "intents", ns: "namespace", id: (k) => String(k.id) },
  deployments: { table: "deployments", id: (k) => String(k.id) },
  namespaces: { table: "namespaces", id: (k) => String(k.name) },
  acl_policies: { table: "acl_policies", id: (k) => String(k.name) },
  acl_tokens: { table: "acl_tokens", id: (k) => String(k.accessor_id) },
};

/** Whether a row op touches a record table (so the feed needs the row as it was before). */
export function isRecordOp(op: RowOp): boolean {
  return op[0] in RECORD_TABLES;
}

/**
 * The changes of one txn. `before` holds, per op position, the row's stored json before the txn
 * (read by the caller from the replica before applying); `rows` names the columns.
 */
export function changesOf(
  ops: readonly RowOp[],
  before: ReadonlyMap<number, string | undefined>,
  rows: ReplicaRows,
): CommittedChange[] {
  const byKey = new Map<string, CommittedChange>();
  ops.forEach((op, pos) => {
    const shape = RECORD_TABLES[op[0]];
    if (!shape) return;
    const [table, kind, values] = op;
    const cols = kind === "put" ? rows.rowOf(table, values) : rows.keyOf(table, values);
    const id = shape.id(cols);
    const record = kind === "put" ? (JSON.parse(String(cols.json)) as unknown) : undefined;
    const namespace = namespaceOf(shape.ns, cols, record, before.get(pos));
    const key = `${shape.table}\u0000${namespace}\u0000${id}`;
    const prev = byKey.get(key);
    if (prev) {
      // Created and deleted within the txn: nothing was there before it, nothing is after.
      if (kind !== "put" && prev.before === undefined) {
        byKey.delete(key);
        return;
      }
      prev.op = kind === "put" ? "put" : "delete";
      if (record === undefined) delete prev.record;
      else prev.record = record;
      return;
    }
    const old = before.get(pos);
    const change: CommittedChange = {
      table: shape.table,
      namespace,
      id,
      op: kind === "put" ? "put" : "delete",
    };
    if (record !== undefined) change.record = record;
    if (old !== undefined) change.before = JSON.parse(old) as unknown;
    byKey.set(key, change);
  });
  return [...byKey.values()];
}

/** A namespaced record's namespace: its key column, else the record's own `Namespace` field. */
function namespaceOf(
  column: string | undefined,
  cols: Record<string, unknown>,
  record: unknown,
  before: string | undefined,
): string {
  if (column && typeof cols[column] === "string") return cols[column];
  const rec = (record ?? (before === undefined ? undefined : JSON.parse(before))) as
    { Namespace?: unknown } | undefined;
  return typeof rec?.Namespace === "string" ? rec.Namespace : "";
}
