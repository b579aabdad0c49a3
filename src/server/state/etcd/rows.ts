/**
 * The etcd store's replica at the row level: an in-memory SQLite database with the SQLite store's
 * schema (engine/schema.ts), read by the SQLite store's own reader and written by its own writer,
 * so every derivation (plugins, indexes, paging, change reads) exists once.
 *
 * Contract:
 * - While `capture` runs, every row the SQLite writer inserts, updates or deletes in any table is
 *   recorded as a RowOp (temp triggers calling a JS function): a `put` carries the whole row (its
 *   columns in table order), a `del` its primary key. Nothing else records them.
 * - `apply(ops)` replays RowOps onto the replica exactly: a put is an upsert that keeps an existing
 *   row's rowid (so tables listed in rowid order, evals, keep their order on every replica), a del
 *   deletes by primary key. Replaying what `capture` recorded on a replica at the same state yields
 *   the same rows, so the replica applies the rows the writing server derived, never re-derives.
 * - `dump()` is every row of every replicated table in rowid order, `restore()` the reverse; they
 *   carry the schema version, and rows of another schema version are refused with a clear error.
 */
import type Database from "better-sqlite3";
import { BerthError } from "../../../structs/errors.js";

/** One row write: `[table, "put", columns]` or `[table, "del", primary key columns]`. */
export type RowOp = [table: string, op: "put" | "del", values: unknown[]];

interface TableShape {
  name: string;
  columns: string[];
  /** Positions of the primary-key columns within `columns`. */
  pk: number[];
  upsert: Database.Statement;
  del: Database.Statement;
  /** The row's `json` column by primary key (for the commit feed's `before`), when it has one. */
  json: Database.Statement | undefined;
  all: Database.Statement;
  clear: Database.Statement;
}

/** The store's own bookkeeping, not replicated (the quarantine stays per replica: it is empty). */
const LOCAL_TABLES = new Set(["quarantine"]);

export interface Dump {
  schema: number;
  tables: Record<string, unknown[][]>;
}

export class ReplicaRows {
  private readonly tables = new Map<string, TableShape>();
  private captured: RowOp[] | null = null;
  /** Per captured put: where the row's last op sits, so a row put twice is sent once (see push). */
  private lastOp = new Map<string, number>();
  readonly schema: number;

  constructor(private readonly db: Database.Database) {
    this.schema = db.pragma("user_version", { simple: true }) as number;
    db.function("berth_capture", { varargs: true, deterministic: false }, (...args: unknown[]) => {
      this.record(args);
      return null;
    });
    const names = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .pluck()
      .all() as string[];
    for (const name of names) {
      if (LOCAL_TABLES.has(name)) continue;
      this.tables.set(name, this.shape(name));
    }
  }

  /** Runs `body` recording the row ops it makes; returns them with what body returned. */
  capture<T>(body: () => T): { result: T; ops: RowOp[] } {
    const ops: RowOp[] = [];
    this.captured = ops;
    this.lastOp = new Map();
    try {
      const result = body();
      return { result, ops };
    } finally {
      this.captured = null;
    }
  }

  /** Replays ops in order (inside the caller's transaction). */
  apply(ops: readonly RowOp[]): void {
    for (const [table, op, values] of ops) {
      const t = this.table(table);
      if (op === "put") {
        if (values.length !== t.columns.length) {
          throw new Error(
            `replicated row of ${table} has ${values.length} columns, this schema ${t.columns.length}`,
          );
        }
        t.upsert.run(values);
      } else {
        t.del.run(values);
      }
    }
  }

  /** The stored `json` of the row a RowOp names (before it is applied), or undefined. */
  jsonOf(table: string, op: RowOp[1], values: readonly unknown[]): string | undefined {
    const t = this.table(table);
    if (!t.json) return undefined;
    const key = op === "put" ? t.pk.map((i) => values[i]) : values;
    return t.json.get(key) as string | undefined;
  }

  /** Column name → value of a put's row. */
  rowOf(table: string, values: readonly unknown[]): Record<string, unknown> {
    const t = this.table(table);
    return Object.fromEntries(t.columns.map((c, i) => [c, values[i]]));
  }

  /** Column name → value of a del's primary key. */
  keyOf(table: string, values: readonly unknown[]): Record<string, unknown> {
    const t = this.table(table);
    return Object.fromEntries(t.pk.map((i, n) => [t.columns[i]!, values[n]]));
  }

  dump(): Dump {
    const tables: Record<string, unknown[][]> = {};
    for (const t of this.tables.values()) tables[t.name] = t.all.raw().all() as unknown[][];
    return { schema: this.schema, tables };
  }

  /** Replaces every replicated row with the dump's (inside the caller's transaction). */
  restore(d: Dump): void {
    this.checkSchema(d.schema);
    for (const t of this.tables.values()) t.clear.run();
    for (const [name, rows] of Object.entries(d.tables)) {
      this.apply(rows.map((r): RowOp => [name, "put", r]));
    }
  }

  /**
   * Rows of another schema are refused (ERR_CONFLICT, not an etcd outage): an older release's are
   * migrated before the first load (schema_upgrade.ts), so they show up here only when a server of
   * the older release still writes; a newer release's mean this server is the old one.
   */
  checkSchema(schema: number): void {
    if (schema === this.schema) return;
    const why =
      schema > this.schema
        ? "it was written by a later release: upgrade this server"
        : "a server of an older release still writes it: stop the older servers";
    throw new BerthError(
      "ERR_CONFLICT",
      `the state in etcd has schema version ${schema}, this server's is ${this.schema}; ${why} (run one berth version on every server)`,
    );
  }

  private table(name: string): TableShape {
    const t = this.tables.get(name);
    if (!t) throw new Error(`replicated row names unknown table "${name}"`);
    return t;
  }

  /** Called by the triggers: ["put", table, ...row] | ["upd", table, ...newRow, ...oldPk] | ["del", table, ...pk]. */
  private record(args: unknown[]): void {
    const ops = this.captured;
    if (!ops) return;
    const [kind, table] = args as [string, string];
    const t = this.table(table);
    if (kind === "del") {
      this.push(ops, t, "del", args.slice(2));
      return;
    }
    const row = args.slice(2, 2 + t.columns.length);
    if (kind === "upd") {
      const oldPk = args.slice(2 + t.columns.length);
      const newPk = t.pk.map((i) => row[i]);
      if (JSON.stringify(oldPk) !== JSON.stringify(newPk)) this.push(ops, t, "del", oldPk);
    }
    this.push(ops, t, "put", row);
  }

  /**
   * A put of a row whose last op in this capture was a put too replaces that op's values in place:
   * replaying either gives the same rows and rowids (the row was inserted at the first put's place),
   * and a txn that rewrites one plugin summary per node it puts sends it once.
   */
  private push(ops: RowOp[], t: TableShape, op: RowOp[1], values: unknown[]): void {
    const key = `${t.name}\u0000${JSON.stringify(op === "put" ? t.pk.map((i) => values[i]) : values)}`;
    const last = this.lastOp.get(key);
    if (op === "put" && last !== undefined && ops[last]![1] === "put") {
      ops[last] = [t.name, "put", values];
      return;
    }
    this.lastOp.set(key, ops.length);
    ops.push([t.name, op, values]);
  }

  /** Reads a table's columns, prepares its statements and creates its capture triggers. */
  private shape(name: string): TableShape {
    const info = this.db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string; pk: number }[];
    const columns = info.map((c) => c.name);
    const pk = info
      .map((c, i) => ({ i, pk: c.pk }))
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.i);
    if (pk.length === 0) throw new Error(`table ${name} has no primary key; the etcd replica needs one`);
    const q = (c: string) => `"${c}"`;
    const pkCols = pk.map((i) => q(columns[i]!));
    const rest = columns.filter((_, i) => !pk.includes(i)).map(q);
    const onConflict =
      rest.length === 0
        ? "DO NOTHING"
        : `DO UPDATE SET ${rest.map((c) => `${c} = excluded.${c}`).join(", ")}`;
    const where = pkCols.map((c) => `${c} IS ?`).join(" AND ");
    const newRow = columns.map((c) => `NEW.${q(c)}`).join(", ");
    const oldPk = pk.map((i) => `OLD.${q(columns[i]!)}`).join(", ");
    this.db.exec(`
      CREATE TEMP TRIGGER "cap_ins_${name}" AFTER INSERT ON main."${name}"
        BEGIN SELECT berth_capture('put', '${name}', ${newRow}); END;
      CREATE TEMP TRIGGER "cap_upd_${name}" AFTER UPDATE ON main."${name}"
        BEGIN SELECT berth_capture('upd', '${name}', ${newRow}, ${oldPk}); END;
      CREATE TEMP TRIGGER "cap_del_${name}" AFTER DELETE ON main."${name}"
        BEGIN SELECT berth_capture('del', '${name}', ${oldPk}); END;
    `);
    return {
      name,
      columns,
      pk,
      upsert: this.db.prepare(
        `INSERT INTO "${name}" (${columns.map(q).join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT(${pkCols.join(", ")}) ${onConflict}`,
      ),
      del: this.db.prepare(`DELETE FROM "${name}" WHERE ${where}`),
      json: columns.includes("json")
        ? this.db.prepare(`SELECT json FROM "${name}" WHERE ${where}`).pluck()
        : undefined,
      all: this.db.prepare(`SELECT ${columns.map(q).join(", ")} FROM "${name}" ORDER BY rowid`),
      clear: this.db.prepare(`DELETE FROM "${name}"`),
    };
  }
}
