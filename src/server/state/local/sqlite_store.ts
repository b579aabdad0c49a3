/**
 * The embedded StateStore: one SQLite file (WAL, synchronous=FULL) in the server data dir, or
 * `:memory:` for tests and `-dev`. better-sqlite3 is synchronous, so a txn never interleaves with
 * another. Txns asked for in the same turn of the event loop are group-committed (group_commit.ts):
 * they run one after another in ONE SQLite transaction, each in its own savepoint (a txn that throws
 * undoes only itself), each still at its own new index, and ONE durable COMMIT acknowledges them
 * all; a txn's promise settles only after that COMMIT. The store holds a SqliteEngine over the file
 * (engine/engine.ts: reads, statements, indexes) and runs each txn with its writer (engine/writer.ts).
 * Opening the file checks every stored record once and quarantines those that cannot be loaded
 * (quarantine/quarantine.ts), logging one error per record and a summary line.
 */
import path from "node:path";
import { ensureDirMode, preparePrivateDbFile, tightenDbFiles } from "../../../internal/private_files.js";
import Database from "better-sqlite3";
import { nullLogger, type Logger } from "../../../internal/log.js";
import { migrate } from "../engine/schema.js";
import { ensureDefaultNamespace } from "../engine/namespaces.js";
import {
  quarantineBadRecords,
  quarantineStatements,
  type QuarantineReport,
} from "../quarantine/quarantine.js";
import { SqliteEngine, type IndexMark } from "../engine/engine.js";
import { runWrite, type Written } from "../engine/writer.js";
import { STORE_READS, withEngineReads, type StoreOwn, type StoreReads } from "../engine/reads.js";
import { openSecretsAtRest, type SecretsAtRest } from "../secrets/secrets_at_rest.js";
import type { Keyring } from "../secrets/keyring.js";
import { IndexWatch } from "../watch.js";
import { BatchLostError, DEFAULT_GROUP_COMMIT, GroupCommit, type GroupCommitLimits } from "./group_commit.js";
import type { WatchKey } from "../watch_keys.js";
import type { CommitListener, CommittedTxn } from "../commit_feed.js";
import { CommitListeners, TxnChanges } from "../commit_recorder.js";
import type { GroupCommitStats, QuarantinedRecord, StateWriter, Table } from "../store.js";
import { withDefaults } from "../../../internal/with_defaults.js";

export interface SqliteStoreOptions {
  now?: () => number;
  /** Where the open pass reports quarantined records (one error each) and its summary. */
  log?: Logger;
  /** Bounds of one group-committed batch (group_commit.ts); `maxBatch: 1` commits every txn alone. */
  groupCommit?: Partial<GroupCommitLimits>;
}

function openDb(dataDir: string | null): Database.Database {
  let file = ":memory:";
  if (dataDir !== null) {
    // Root only: the state holds every job and volume (secrets encrypted, secrets/secrets_at_rest.ts).
    ensureDirMode(dataDir);
    file = path.join(dataDir, "state.db");
    preparePrivateDbFile(file);
  }
  const db = new Database(file);
  if (dataDir !== null) {
    db.pragma("journal_mode = WAL");
    // Overwritten and deleted records are zeroed, not left in free space: a volume's secrets as
    // they were before sealing (an older berth's state) or a deleted record leave no copy behind.
    db.pragma("secure_delete = ON");
    tightenDbFiles(file);
  }
  db.pragma("synchronous = FULL");
  migrate(db);
  return db;
}

/** The store's own half; its reads are its engine's (SqliteStateStore below). */
class LocalStore implements StoreOwn {
  readonly engine: SqliteEngine;
  private readonly db: Database.Database;
  private readonly watch: IndexWatch;
  private readonly quarantine: ReturnType<typeof quarantineStatements>;
  private readonly commits: GroupCommit<StateWriter>;
  /** The batch in progress: the tables its txns touched, and the indexes to restore if it fails. */
  private batch:
    | {
        touched: Set<Table>;
        keys: Set<WatchKey>;
        before: IndexMark;
        /** The batch's txns as the commit feed delivers them, in index order (only while listened to). */
        committed: CommittedTxn[];
      }
    | undefined;
  /** The commit feed's listeners (commit_feed.ts); changes are recorded only while there are any. */
  private readonly feed: CommitListeners;
  private readonly inTransaction: (body: () => void) => void;
  private readonly inSavepoint: (fn: (tx: StateWriter) => unknown) => unknown;
  private readonly keystore: string | null;

  /** `dataDir` null opens an in-memory store. */
  constructor(dataDir: string | null, opts: SqliteStoreOptions = {}) {
    const db = openDb(dataDir);
    const now = opts.now ?? Date.now;
    const log = opts.log ?? nullLogger;
    // A file-backed store always seals secrets, under the key in `<dataDir>/keystore/`; a missing
    // or wrong key stops the open here, with the database closed again.
    let atRest: SecretsAtRest | null = null;
    this.keystore = dataDir === null ? null : path.join(dataDir, "keystore");
    if (this.keystore !== null) {
      try {
        atRest = openSecretsAtRest(db, this.keystore, log);
      } catch (err) {
        db.close();
        throw err;
      }
    }
    // Before the reader loads the indexes: the pass may move them. The pass is one transaction; if
    // it fails itself, nothing of it is written and the server starts with the records as they are
    // (its loops isolate a record that throws): a bug in the check must not be a crash loop either.
    let report: QuarantineReport | undefined;
    try {
      report = quarantineBadRecords(db, now());
    } catch (err) {
      log.error("checking the stored records failed; starting without the check", { error: err });
    }
    ensureDefaultNamespace(db);
    this.engine = new SqliteEngine(db, now, atRest);
    this.db = db;
    this.feed = new CommitListeners(log);
    this.quarantine = quarantineStatements(db);
    if (report) reportOpen(log, report, this.quarantine.list().length);
    const engine = this.engine;
    this.watch = new IndexWatch(
      (t) => engine.tableIndex(t),
      () => engine.index(),
    );
    this.inTransaction = db.transaction((body: () => void) => this.batchBody(body));
    // Nested inside the batch's transaction, better-sqlite3 makes this a SAVEPOINT.
    this.inSavepoint = db.transaction((fn: (tx: StateWriter) => unknown) => this.runOne(fn));
    this.commits = new GroupCommit<StateWriter>(
      {
        transaction: (body) => this.runBatch(body),
        isolated: (fn) => this.isolated(fn),
        committed: () => this.batchCommitted(),
        rolledBack: () => this.batchRolledBack(),
      },
      withDefaults(DEFAULT_GROUP_COMMIT, opts.groupCommit),
    );
  }

  txn<T>(fn: (tx: StateWriter) => T): Promise<T> {
    if (!this.db.open) return Promise.reject(new Error("the state store is closed"));
    return this.commits.submit(fn);
  }

  onCommit(listener: CommitListener): () => void {
    return this.feed.add(listener);
  }

  /** How many group-committed batches, and txns in them, this store has committed. */
  groupCommitStats(): GroupCommitStats {
    return this.commits.stats();
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

  quarantined(): QuarantinedRecord[] {
    return this.quarantine.list();
  }

  dropQuarantined(table: string, namespace: string, key: string): Promise<boolean> {
    return Promise.resolve(this.quarantine.drop(table, namespace, key));
  }

  /**
   * SQLite's online backup of the state into the file `file` (a snapshot save): a copy as of one
   * commit, taken in steps while txns go on (better-sqlite3 backs up over this same connection,
   * so a write during the backup is carried into the copy).
   */
  async backupTo(file: string): Promise<void> {
    await this.db.backup(file);
  }

  /** The keyring's directory (`<dataDir>/keystore`), null for an in-memory store (nothing sealed). */
  get keystoreDir(): string | null {
    return this.keystore;
  }

  /**
   * Replaces the state (a snapshot restore): `write` runs in one transaction on the state file,
   * then the indexes are read again, secrets open with `keyring` from now on, and every blocking
   * query is woken. Synchronous, so no txn batch interleaves; one that throws changes nothing.
   */
  replaceState(write: (db: Database.Database) => void, keyring: Keyring | undefined): void {
    this.db.transaction(() => write(this.db))();
    this.engine.loadIndexes();
    if (keyring) this.engine.atRest?.useKeyring(keyring);
    this.watch.wakeAll();
  }

  /** Commits the txns still queued (their callers are answered), then closes the file. */
  close(): void {
    if (this.db.open) this.commits.drain();
    this.watch.wakeAll();
    if (this.db.open) this.db.close();
  }

  /** One batch: one SQLite transaction around `body`, its COMMIT durable (synchronous = FULL). */
  private runBatch(body: () => void): void {
    this.batch = { touched: new Set(), keys: new Set(), before: this.engine.mark(), committed: [] };
    this.inTransaction(body);
  }

  /** The batch's body, then the store's index and the touched tables' indexes, once per batch. */
  private batchBody(body: () => void): void {
    body();
    const { touched } = this.batch!;
    if (touched.size > 0) this.engine.persistIndexes(touched);
  }

  private isolated<T>(fn: (tx: StateWriter) => T): T {
    let ran: Written<T>;
    try {
      ran = this.inSavepoint(fn) as Written<T>;
    } catch (err) {
      // SQLite rolls the whole transaction back by itself on some errors (I/O, full disk): the
      // batch's earlier txns are gone too, and what follows must not run outside a transaction.
      if (!this.db.inTransaction) throw new BatchLostError(err);
      throw err;
    }
    // Only a txn that wrote anything takes an index; the txns after it in the batch see it.
    if (ran.touched.size > 0) {
      this.engine.advance(ran.writeIndex, ran.touched);
      for (const t of ran.touched) this.batch!.touched.add(t);
      for (const k of ran.keys) this.batch!.keys.add(k);
      const txn = ran.changes?.committed(ran.writeIndex);
      if (txn) this.batch!.committed.push(txn);
    }
    return ran.result;
  }

  /** One txn, inside its savepoint, at the index after the batch's txns before it. */
  private runOne(fn: (tx: StateWriter) => unknown): Written<unknown> {
    // Recorded only while the commit feed has listeners: otherwise a write pays nothing for it.
    return runWrite(this.engine, fn, this.feed.listening ? new TxnChanges() : undefined);
  }

  private batchCommitted(): void {
    const { touched, keys, committed } = this.batch!;
    this.batch = undefined;
    // After the durable COMMIT and before any of the batch's promises settle (group_commit.ts).
    for (const txn of committed) this.feed.deliver(txn);
    if (touched.size > 0) this.watch.notify(touched, keys);
  }

  private batchRolledBack(): void {
    const before = this.batch!;
    this.batch = undefined;
    this.engine.rewind(before.before);
  }
}

/**
 * The embedded StateStore (see the header): LocalStore's txns, blocking queries, commit feed and
 * quarantine, and its engine's reads (engine/reads.ts).
 */
export type SqliteStateStore = LocalStore & StoreReads;
export const SqliteStateStore = withEngineReads(LocalStore, STORE_READS);

/** One error per record quarantined now (never its JSON: it may hold secrets), then a summary. */
function reportOpen(log: Logger, report: QuarantineReport, held: number): void {
  for (const q of report.quarantined) {
    log.error("stored record cannot be loaded; quarantined", {
      table: q.table,
      namespace: q.namespace || undefined,
      key: q.key,
      error: q.error,
    });
  }
  const summary = {
    records: report.checked,
    quarantined_now: report.quarantined.length,
    quarantined_total: held,
    rederived: report.rederived || undefined,
    check_ms: Math.round(report.elapsedMs),
  };
  if (report.quarantined.length > 0) log.warn("state store opened with quarantined records", summary);
  else log.info("state store opened", summary);
}
