/**
 * The etcd store's local view (etcd/etcd_store.ts): an in-memory SQLite database with the SQLite store's
 * schema, read by the SQLite store's reader (this class is a SqliteReader) and written only by
 * applying committed log entries (etcd/log.ts) as rows (etcd/rows.ts).
 *
 * Contract:
 * - `runBatch` runs txn fns on the current view, each in a savepoint, with the SQLite writer (the
 *   plugin derivation and every index of the SQLite store), and returns the rows each one that
 *   wrote would write, at consecutive indexes; it then rolls everything back: the view is unchanged.
 * - `applyEntry` applies a committed entry's txns above the view's index, in one SQLite
 *   transaction, in order; then wakes blocking queries (tables and watch keys) and feeds the commit
 *   listeners, txn by txn, as the SQLite store does after a commit. An entry whose first txn is past
 *   the next index throws a GapError (the replica must reload); one already applied is a no-op.
 */
import Database from "better-sqlite3";
import type { Logger } from "../../../internal/log.js";
import type { CommitListener, CommittedTxn } from "../commit_feed.js";
import { changesOf, isRecordOp } from "./changes.js";
import type { LogEntry, LogTxn } from "./log.js";
import { ReplicaRows, type Dump } from "./rows.js";
import { migrate } from "../engine/schema.js";
import { ensureDefaultNamespace } from "../engine/namespaces.js";
import { SqliteReader } from "../engine/engine.js";
import { SqliteWriter } from "../engine/writer.js";
import { IndexWatch } from "../watch.js";
import type { WatchKey } from "../watch_keys.js";
import type { QuarantinedRecord, StateWriter, Table } from "../store.js";

/** A txn waiting to run, and its caller's promise. */
export interface Op {
  fn: (w: StateWriter) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}
export type Outcome = { op: Op; ok: true; value: unknown } | { op: Op; ok: false; error: Error };

/** An entry past the replica's next index (the log before it was compacted away): reload. */
export class GapError extends Error {}

export abstract class EtcdReplica extends SqliteReader {
  protected readonly db: Database.Database;
  protected readonly rows: ReplicaRows;
  protected readonly watch: IndexWatch;
  private readonly listeners = new Set<CommitListener>();
  /** Entry IDs applied lately → their last index: a commit whose answer was lost finds itself here. */
  private readonly recentIds = new Map<string, number>();
  protected closed = false;

  constructor(
    now: () => number,
    protected readonly log: Logger,
  ) {
    const db = new Database(":memory:");
    migrate(db);
    // Every replica makes `default` at index 0 alike, as a new SQLite store does.
    ensureDefaultNamespace(db);
    super(db, now, null);
    this.db = db;
    this.rows = new ReplicaRows(db);
    this.watch = new IndexWatch(
      (t) => this.tableIndex(t),
      () => this.index(),
    );
  }

  /** Calls `listener` with every txn this replica applies, its own and other servers' (commit_feed.ts). */
  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  waitFor(
    tables: readonly Table[],
    minIndex: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    keys?: readonly WatchKey[],
  ): Promise<number> {
    return this.watch.wait(tables, minIndex, signal, timeoutMs, keys);
  }

  /** Records are checked by the server that writes them; a replica holds none it could not load. */
  quarantined(): QuarantinedRecord[] {
    return [];
  }

  dropQuarantined(): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** Whether this replica applied the entry with that ID lately. */
  protected applied(entryId: string): boolean {
    return this.recentIds.has(entryId);
  }

  /** See the contract above. */
  protected runBatch(batch: readonly Op[]): { outcomes: Outcome[]; txns: LogTxn[] } {
    const outcomes: Outcome[] = [];
    const txns: LogTxn[] = [];
    const baseIndex = this.currentIndex;
    const baseTables = new Map(this.tableIndexes);
    this.db.exec("BEGIN");
    try {
      for (const op of batch) {
        const touched = new Set<Table>();
        const keys = new Set<WatchKey>();
        const writeIndex = this.currentIndex + 1;
        this.db.exec("SAVEPOINT berth_txn");
        try {
          const { result, ops } = this.rows.capture(() => {
            const writer = new SqliteWriter(this, writeIndex, touched, keys);
            const r = op.fn(writer);
            writer.flushPlugins();
            return r;
          });
          this.db.exec("RELEASE berth_txn");
          // Only a txn that wrote takes an index; the txns after it in the batch see its writes.
          if (touched.size > 0) {
            this.currentIndex = writeIndex;
            for (const t of touched) this.tableIndexes.set(t, writeIndex);
            txns.push({ i: writeIndex, ops, tt: [...touched], k: [...keys] });
          }
          outcomes.push({ op, ok: true, value: result });
        } catch (err) {
          this.db.exec("ROLLBACK TO berth_txn");
          this.db.exec("RELEASE berth_txn");
          outcomes.push({ op, ok: false, error: err instanceof Error ? err : new Error(String(err)) });
        }
      }
    } finally {
      this.db.exec("ROLLBACK");
      this.currentIndex = baseIndex;
      this.tableIndexes.clear();
      for (const [t, i] of baseTables) this.tableIndexes.set(t, i);
    }
    return { outcomes, txns };
  }

  /** See the contract above. */
  protected applyEntry(entry: LogEntry): void {
    if (this.closed) return;
    this.rows.checkSchema(entry.schema);
    const fresh = entry.txns.filter((t) => t.i > this.currentIndex);
    if (fresh.length === 0) return;
    if (fresh[0]!.i !== this.currentIndex + 1) {
      throw new GapError(`log entry starts at ${fresh[0]!.i}, the replica is at ${this.currentIndex}`);
    }
    const feed = this.listeners.size > 0;
    const fed: CommittedTxn[] = [];
    this.db.transaction(() => {
      for (const t of fresh) {
        // The feed's `before`: each record as it was before this txn, read before it applies.
        const before = new Map<number, string | undefined>();
        if (feed) {
          t.ops.forEach((op, pos) => {
            if (isRecordOp(op)) before.set(pos, this.rows.jsonOf(op[0], op[1], op[2]));
          });
        }
        this.rows.apply(t.ops);
        this.statements.setMeta.run(t.i);
        for (const tbl of t.tt) this.statements.setTableIdx.run(tbl, t.i);
        if (feed) fed.push({ index: t.i, changes: changesOf(t.ops, before, this.rows) });
      }
    })();
    const touched = new Set<Table>();
    const keys = new Set<WatchKey>();
    for (const t of fresh) {
      this.currentIndex = t.i;
      for (const tbl of t.tt) {
        this.tableIndexes.set(tbl, t.i);
        touched.add(tbl);
      }
      for (const k of t.k) keys.add(k);
    }
    this.recentIds.set(entry.id, this.currentIndex);
    if (this.recentIds.size > 1024) this.recentIds.delete(this.recentIds.keys().next().value!);
    this.watch.notify(touched, keys);
    for (const txn of fed) {
      for (const l of this.listeners) {
        try {
          l(txn);
        } catch (err) {
          this.log.error("a commit listener threw", { error: err });
        }
      }
    }
  }

  /** Replaces every row with a snapshot's, and the indexes with the snapshot's. */
  protected restore(snapshot: Dump): void {
    this.db.transaction(() => this.rows.restore(snapshot))();
    this.currentIndex = (this.statements.getMeta.get() as { value: number } | undefined)?.value ?? 0;
    this.tableIndexes.clear();
    for (const r of this.statements.allTableIdx.all() as { name: Table; idx: number }[]) {
      this.tableIndexes.set(r.name, r.idx);
    }
  }
}
