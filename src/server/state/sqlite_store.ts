/**
 * The embedded StateStore: one SQLite file (WAL, synchronous=FULL) in the server data dir, or
 * `:memory:` for tests and `-dev`. better-sqlite3 is synchronous, so a txn is one SQLite
 * transaction and never interleaves with another. Reads are in sqlite_reader.ts, a transaction's
 * writes (and the plugin derivation they run, derive_plugins.ts) in sqlite_writer.ts. Opening the
 * file checks every stored record once and quarantines those that cannot be loaded (quarantine.ts),
 * logging one error per record and a summary line.
 */
import path from "node:path";
import { ensureDirMode, preparePrivateDbFile, tightenDbFiles } from "../../internal/private_files.js";
import Database from "better-sqlite3";
import { nullLogger, type Logger } from "../../internal/log.js";
import { migrate } from "./sqlite_schema.js";
import { ensureDefaultNamespace } from "./sqlite_namespaces.js";
import { quarantineBadRecords, quarantineStatements, type QuarantineReport } from "./quarantine.js";
import { SqliteReader } from "./sqlite_reader.js";
import { SqliteWriter } from "./sqlite_writer.js";
import { openSecretsAtRest, type SecretsAtRest } from "./secrets_at_rest.js";
import { IndexWatch } from "./watch.js";
import type { WatchKey } from "./watch_keys.js";
import type { QuarantinedRecord, StateStore, StateWriter, Table } from "./store.js";

export interface SqliteStoreOptions {
  now?: () => number;
  /** Where the open pass reports quarantined records (one error each) and its summary. */
  log?: Logger;
}

function openDb(dataDir: string | null): Database.Database {
  let file = ":memory:";
  if (dataDir !== null) {
    // Root only: the state holds every job and volume (secrets encrypted, secrets_at_rest.ts).
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

export class SqliteStateStore extends SqliteReader implements StateStore {
  private readonly db: Database.Database;
  private readonly watch: IndexWatch;
  private readonly quarantine: ReturnType<typeof quarantineStatements>;

  /** `dataDir` null opens an in-memory store. */
  constructor(dataDir: string | null, opts: SqliteStoreOptions = {}) {
    const db = openDb(dataDir);
    const now = opts.now ?? Date.now;
    const log = opts.log ?? nullLogger;
    // A file-backed store always seals secrets, under the key in `<dataDir>/keystore/`; a missing
    // or wrong key stops the open here, with the database closed again.
    let atRest: SecretsAtRest | null = null;
    if (dataDir !== null) {
      try {
        atRest = openSecretsAtRest(db, path.join(dataDir, "keystore"), log);
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
    super(db, now, atRest);
    this.db = db;
    this.quarantine = quarantineStatements(db);
    if (report) reportOpen(log, report, this.quarantine.list().length);
    this.watch = new IndexWatch(
      (t) => this.tableIndex(t),
      () => this.index(),
    );
  }

  txn<T>(fn: (tx: StateWriter) => T): Promise<T> {
    try {
      return Promise.resolve(this.txnSync(fn));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
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

  close(): void {
    this.watch.wakeAll();
    if (this.db.open) this.db.close();
  }

  private txnSync<T>(fn: (tx: StateWriter) => T): T {
    const touched = new Set<Table>();
    // The objects the txn put or deleted: the watch wakes only the waiters on them (watch.ts).
    const keys = new Set<WatchKey>();
    const writeIndex = this.currentIndex + 1;
    const run = this.db.transaction(() => {
      keys.clear();
      const writer = new SqliteWriter(this, writeIndex, touched, keys);
      const result = fn(writer);
      writer.flushPlugins();
      if (touched.size > 0) {
        this.statements.setMeta.run(writeIndex);
        for (const t of touched) this.statements.setTableIdx.run(t, writeIndex);
      }
      return result;
    });
    const result = run();
    if (touched.size > 0) {
      this.currentIndex = writeIndex;
      for (const t of touched) this.tableIndexes.set(t, writeIndex);
      this.watch.notify(touched, keys);
    }
    return result;
  }
}

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
