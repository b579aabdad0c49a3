/**
 * The etcd store's local view (etcd_store.ts): a SqliteEngine over an in-memory database with the
 * SQLite store's schema, which the store reads as the SQLite store reads its own, written only by
 * applying committed log entries (log.ts) as rows (rows.ts).
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
import { SqliteEngine } from "../engine/engine.js";
import { runWrite } from "../engine/writer.js";
import { IndexWatch } from "../watch.js";
import type { WatchKey } from "../watch_keys.js";
import type { StateWriter, Table } from "../store.js";

/** A txn waiting to run, and its caller's promise. */
export interface Op {
  fn: (w: StateWriter) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}
export type Outcome = { op: Op; ok: true; value: unknown } | { op: Op; ok: false; error: Error };

/** An entry past the replica's next index (the log before it was compacted away): reload. */
export class GapError extends Error {}

export class EtcdReplica {
  readonly engine: SqliteEngine;
  readonly rows: ReplicaRows;
  private readonly db: Database.Database;
  private readonly watch: IndexWatch;
  private readonly listeners = new Set<CommitListener>();
  /** Entry IDs applied lately → their last index: a commit whose answer was lost finds itself here. */
  private readonly recentIds = new Map<string, number>();
  /** Set by `close`: nothing is applied any more. */
  closed = false;

  constructor(
    now: () => number,
    private readonly log: Logger,
  ) {
    const db = new Database(":memory:");
    migrate(db);
    // Every replica makes `default` at index 0 alike, as a new SQLite store does.
    ensureDefaultNamespace(db);
    this.db = db;
    this.engine = new SqliteEngine(db, now, null);
    this.rows = new ReplicaRows(db);
    const engine = this.engine;
    this.watch = new IndexWatch(
      (t) => engine.tableIndex(t),
      () => engine.index(),
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

  /** Wakes every blocking query (after a reload, and at close: they answer with the index they have). */
  wakeAll(): void {
    this.watch.wakeAll();
  }

  /** Applies nothing more and wakes every blocking query; the database stays open until closeDatabase. */
  close(): void {
    this.closed = true;
    this.watch.wakeAll();
  }

  closeDatabase(): void {
    if (this.db.open) this.db.close();
  }

  /** Whether this replica applied the entry with that ID lately. */
  applied(entryId: string): boolean {
    return this.recentIds.has(entryId);
  }

  /** See the contract above. */
  runBatch(batch: readonly Op[]): { outcomes: Outcome[]; txns: LogTxn[] } {
    const outcomes: Outcome[] = [];
    const txns: LogTxn[] = [];
    const before = this.engine.mark();
    this.db.exec("BEGIN");
    try {
      for (const op of batch) {
        this.db.exec("SAVEPOINT berth_txn");
        try {
          const { result: ran, ops } = this.rows.capture(() => runWrite(this.engine, op.fn));
          this.db.exec("RELEASE berth_txn");
          // Only a txn that wrote takes an index; the txns after it in the batch see its writes.
          if (ran.touched.size > 0) {
            this.engine.advance(ran.writeIndex, ran.touched);
            txns.push({ i: ran.writeIndex, ops, tt: [...ran.touched], k: [...ran.keys] });
          }
          outcomes.push({ op, ok: true, value: ran.result });
        } catch (err) {
          this.db.exec("ROLLBACK TO berth_txn");
          this.db.exec("RELEASE berth_txn");
          outcomes.push({ op, ok: false, error: err instanceof Error ? err : new Error(String(err)) });
        }
      }
    } finally {
      this.db.exec("ROLLBACK");
      this.engine.rewind(before);
    }
    return { outcomes, txns };
  }

  /** See the contract above. */
  applyEntry(entry: LogEntry): void {
    if (this.closed) return;
    this.rows.checkSchema(entry.schema);
    const at = this.engine.index();
    const fresh = entry.txns.filter((t) => t.i > at);
    if (fresh.length === 0) return;
    if (fresh[0]!.i !== at + 1) {
      throw new GapError(`log entry starts at ${fresh[0]!.i}, the replica is at ${at}`);
    }
    const fed = this.writeTxns(fresh);
    this.recentIds.set(entry.id, this.engine.index());
    if (this.recentIds.size > 1024) this.recentIds.delete(this.recentIds.keys().next().value!);
    this.notify(fresh, fed);
  }

  /**
   * The txns' rows and indexes, in one SQLite transaction (the indexes put back if it fails);
   * returns them as the commit feed delivers them, only while someone listens.
   */
  private writeTxns(fresh: readonly LogTxn[]): CommittedTxn[] {
    const feed = this.listeners.size > 0;
    const fed: CommittedTxn[] = [];
    const before = this.engine.mark();
    try {
      this.db.transaction(() => {
        for (const t of fresh) {
          // The feed's `before`: each record as it was before this txn, read before it applies.
          const prior = new Map<number, string | undefined>();
          if (feed) {
            t.ops.forEach((op, pos) => {
              if (isRecordOp(op)) prior.set(pos, this.rows.jsonOf(op[0], op[1], op[2]));
            });
          }
          this.rows.apply(t.ops);
          this.engine.advance(t.i, t.tt);
          this.engine.persistIndexes(t.tt);
          if (feed) fed.push({ index: t.i, changes: changesOf(t.ops, prior, this.rows) });
        }
      })();
    } catch (err) {
      this.engine.rewind(before);
      throw err;
    }
    return fed;
  }

  /** After applying: wakes the blocking queries on what the txns touched, then feeds the listeners. */
  private notify(fresh: readonly LogTxn[], fed: readonly CommittedTxn[]): void {
    const touched = new Set<Table>();
    const keys = new Set<WatchKey>();
    for (const t of fresh) {
      for (const tbl of t.tt) touched.add(tbl);
      for (const k of t.k) keys.add(k);
    }
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

  /** The replica's database as a SQLite image (db.serialize; a snapshot save reads a replica built for it). */
  image(): Buffer {
    return this.db.serialize();
  }

  /** Replaces every row with a snapshot's, and the indexes with the snapshot's. */
  restore(snapshot: Dump): void {
    this.db.transaction(() => this.rows.restore(snapshot))();
    this.engine.loadIndexes();
  }
}
