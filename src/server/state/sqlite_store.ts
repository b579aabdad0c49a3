/**
 * The embedded StateStore: one SQLite file (WAL, synchronous=FULL) in the server data dir, or
 * `:memory:` for tests and `-dev`. better-sqlite3 is synchronous, so a txn is one SQLite
 * transaction and never interleaves with another. Reads are in sqlite_reader.ts, a transaction's
 * writes (and the plugin derivation they run, derive_plugins.ts) in sqlite_writer.ts.
 */
import path from "node:path";
import { mkdirSync } from "node:fs";
import Database from "better-sqlite3";
import { migrate } from "./sqlite_schema.js";
import { SqliteReader } from "./sqlite_reader.js";
import { SqliteWriter } from "./sqlite_writer.js";
import { IndexWatch } from "./watch.js";
import type { StateStore, StateWriter, Table } from "./store.js";

function openDb(dataDir: string | null): Database.Database {
  let file = ":memory:";
  if (dataDir !== null) {
    mkdirSync(dataDir, { recursive: true });
    file = path.join(dataDir, "state.db");
  }
  const db = new Database(file);
  if (dataDir !== null) db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  migrate(db);
  return db;
}

export class SqliteStateStore extends SqliteReader implements StateStore {
  private readonly db: Database.Database;
  private readonly watch: IndexWatch;

  /** `dataDir` null opens an in-memory store. */
  constructor(dataDir: string | null, opts: { now?: () => number } = {}) {
    const db = openDb(dataDir);
    super(db, opts.now ?? Date.now);
    this.db = db;
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
  ): Promise<number> {
    return this.watch.wait(tables, minIndex, signal, timeoutMs);
  }

  close(): void {
    this.watch.wakeAll();
    if (this.db.open) this.db.close();
  }

  private txnSync<T>(fn: (tx: StateWriter) => T): T {
    const touched = new Set<Table>();
    const writeIndex = this.currentIndex + 1;
    const run = this.db.transaction(() => {
      const writer = new SqliteWriter(this, writeIndex, touched);
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
      this.watch.notify(touched);
    }
    return result;
  }
}
