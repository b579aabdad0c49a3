/**
 * The etcd StateStore: several servers share one state through etcd (log.ts has the layout).
 *
 * - Reads are synchronous, from a local replica (replica.ts: a SqliteEngine over an in-memory
 *   database) fed by an etcd watch on the log.
 *   Every server's replica applies every committed batch, its own and the others', in index order,
 *   and then wakes the same blocking queries (tables and watch keys) and commit listeners
 *   (commit_feed.ts) as the SQLite store.
 * - A txn runs its fn on the replica with the SQLite writer inside a transaction that is always
 *   rolled back; the rows it wrote are captured and sent, and the replica changes only when it
 *   applies the committed entry. Txns asked for while a commit is in flight (or in one turn of the
 *   event loop) form the next batch: ONE etcd txn carries them all, each at its own index, run in
 *   order, each seeing the ones before it; one that throws writes nothing and fails alone.
 * - The commit compares P/index with the index the batch ran on. When another server committed
 *   first, the replica catches up and the batch runs again (store.ts: fns are re-runnable). A txn's
 *   promise settles once etcd has committed it (durable on a quorum) and the replica applied it.
 * - etcd unreachable: a txn rejects with ERR_STATE_UNAVAILABLE naming the endpoints; reads keep
 *   serving the last view; the watch reconnects and the replica catches up. A commit whose answer
 *   was lost is looked for in the log (by its entry ID) before the store answers.
 */
import type { Etcd3, IKeyValue, Watcher } from "etcd3";
import { BerthError } from "../../../structs/errors.js";
import { nullLogger, type Logger } from "../../../internal/log.js";
import { EtcdLog, type LogEntry } from "./log.js";
import { EtcdReplica, GapError, type Op, type Outcome } from "./replica.js";
import { createEtcdClient, describeEtcdError } from "./client.js";
import type { Dump } from "./rows.js";
import type { GroupCommitStats, QuarantinedRecord, StateWriter, Table } from "../store.js";
import { TABLES } from "../tables.js";
import { readImageAtOneRevision, restoreIntoEtcd } from "./etcd_snapshot.js";
import { upgradeEtcdSchema } from "./schema_upgrade.js";
import type { CommitListener } from "../commit_feed.js";
import type { WatchKey } from "../watch_keys.js";
import type { SqliteEngine } from "../engine/engine.js";
import { STORE_READS, withEngineReads, type StoreOwn, type StoreReads } from "../engine/reads.js";

export interface EtcdStoreOptions {
  /** Client URLs of the etcd members, e.g. ["http://127.0.0.1:2379"]. */
  endpoints: string[];
  /** Every key of this berth cluster lives under it (e.g. "/berth"). */
  prefix: string;
  now?: () => number;
  log?: Logger;
  /** Most txns one etcd commit carries (default 256). */
  maxBatch?: number;
  /** Largest etcd value written; bigger entries go to chunks (default 1 MiB; see log.ts). */
  maxValueBytes?: number;
  /** A snapshot is written, and the log it covers deleted, every this many indexes (default 5,000). */
  snapshotEvery?: number;
  /** Deadline of one etcd request (default 5 s). */
  requestTimeoutMs?: number;
}

/** The store's own half; its reads are its replica's engine's (EtcdStateStore below). */
class EtcdStore implements StoreOwn {
  readonly engine: SqliteEngine;
  private readonly replica: EtcdReplica;
  private readonly log: Logger;
  private readonly etcdLog: EtcdLog;
  private readonly where: string;
  private readonly maxBatch: number;
  private readonly snapshotEvery: number;
  private watcher: Watcher | undefined;
  private queue: Op[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private flushing = false;
  /** Applies (watch, catch-up, own commits) run one after another on this chain. */
  private chain: Promise<void> = Promise.resolve();
  /** The index of the latest snapshot this store knows of (0: none). */
  private snapIndex = 0;
  private snapshotting = false;
  private readonly counters: GroupCommitStats = { batches: 0, ops: 0, largestBatch: 0 };

  private get closed(): boolean {
    return this.replica.closed;
  }

  /** Opens the store: loads the snapshot and the log after it, then follows the log. */
  static async open(opts: EtcdStoreOptions): Promise<EtcdStateStore> {
    const client = createEtcdClient(opts.endpoints, opts.requestTimeoutMs ?? 5_000);
    const store: EtcdStateStore = new EtcdStateStore(client, opts);
    try {
      await store.load();
    } catch (err) {
      store.close();
      throw store.unavailable(err, "could not load the state");
    }
    return store;
  }

  /** Use `EtcdStateStore.open`, which loads the state before it answers. */
  constructor(
    private readonly client: Etcd3,
    opts: EtcdStoreOptions,
  ) {
    this.log = opts.log ?? nullLogger;
    this.replica = new EtcdReplica(opts.now ?? Date.now, this.log);
    this.engine = this.replica.engine;
    this.where = opts.endpoints.join(",");
    this.maxBatch = opts.maxBatch ?? 256;
    this.snapshotEvery = opts.snapshotEvery ?? 5_000;
    this.etcdLog = new EtcdLog(client, opts.prefix, opts.maxValueBytes ?? 1024 * 1024);
  }

  txn<T>(fn: (tx: StateWriter) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the state store is closed"));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Calls `listener` with every txn the replica applies, this server's and the others' (commit_feed.ts). */
  onCommit(listener: CommitListener): () => void {
    return this.replica.onCommit(listener);
  }

  waitFor(
    tables: readonly Table[],
    minIndex: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    keys?: readonly WatchKey[],
  ): Promise<number> {
    return this.replica.waitFor(tables, minIndex, signal, timeoutMs, keys);
  }

  /** Records are checked by the server that writes them; a replica holds none it could not load. */
  quarantined(): QuarantinedRecord[] {
    return [];
  }

  dropQuarantined(): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** Batches committed to etcd by this store and the txns they carried (benchmarks). */
  groupCommitStats(): GroupCommitStats {
    return { ...this.counters };
  }

  /** The state at one etcd revision as a SQLite image (a snapshot save; etcd_snapshot.ts). */
  readImage(): Promise<{ image: Buffer; index: number; revision: string }> {
    return readImageAtOneRevision(this.etcdLog, this.log);
  }

  /**
   * Replaces the cluster's state with `rows` (a snapshot restore; etcd_snapshot.ts), resolving
   * with the restore's index once this server's replica has applied it.
   */
  async replaceState(
    rows: Map<string, unknown[][]>,
    snapshotIndex: number,
    stamp: (rows: Map<string, unknown[][]>, index: number) => void,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    let at: number;
    try {
      at = await restoreIntoEtcd(this.etcdLog, this.replica.rows.schema, snapshotIndex, rows, stamp, signal);
    } catch (err) {
      throw this.unavailable(err, "the snapshot was not restored");
    }
    // The watch brings the restore's entry within milliseconds; a minute means it is lost.
    const deadline = Date.now() + 60_000;
    while (this.engine.index() < at && !this.closed) {
      if (Date.now() > deadline) {
        throw new BerthError(
          "ERR_STATE_UNAVAILABLE",
          `the restore was committed to etcd at index ${at}, but this server has not applied it within a minute`,
        );
      }
      await this.replica.waitFor([...TABLES], at - 1, signal, 1_000);
    }
    return at;
  }

  /** Stops following etcd; txns not yet committed are rejected (nothing of them is written). */
  close(): void {
    if (this.closed) return;
    this.replica.close();
    if (this.scheduled) clearImmediate(this.scheduled);
    const pending = this.queue;
    this.queue = [];
    for (const op of pending) op.reject(new Error("the state store is closed"));
    const w = this.watcher;
    this.watcher = undefined;
    void (w ? w.cancel().catch(() => undefined) : Promise.resolve()).finally(() => this.client.close());
    if (!this.flushing) this.replica.closeDatabase();
  }

  /** ERR_STATE_UNAVAILABLE naming etcd and its endpoints, with the cause in one line, never a stack. */
  unavailable(err: unknown, what: string): BerthError {
    if (err instanceof BerthError) return err;
    return new BerthError(
      "ERR_STATE_UNAVAILABLE",
      `etcd at ${this.where} is unavailable (${describeEtcdError(err)}); ${what}`,
      { cause: err },
    );
  }

  private schedule(): void {
    if (this.scheduled || this.flushing || this.closed) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      void this.flush();
    });
  }

  /** Commits batch after batch while txns wait; one commit in flight at a time. */
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.commitBatch(batch);
        } catch (err) {
          const e = err instanceof Error ? err : new Error(String(err));
          for (const op of batch) op.reject(e);
        }
      }
    } finally {
      this.flushing = false;
      if (this.closed) this.replica.closeDatabase();
    }
  }

  private async commitBatch(batch: Op[]): Promise<void> {
    let lostAnswers = 0;
    for (;;) {
      if (this.closed) throw new Error("the state store is closed");
      const base = this.engine.index();
      const { outcomes, txns } = this.replica.runBatch(batch);
      if (txns.length === 0) return settle(outcomes);
      const entry: LogEntry = { schema: this.replica.rows.schema, id: crypto.randomUUID(), txns };
      let held: number | null;
      try {
        held = await this.etcdLog.commit(base, entry);
      } catch (err) {
        // No answer: the commit may or may not have landed. Read the log to learn which.
        try {
          await this.serial(async () => void (await this.catchUp()));
        } catch {
          throw this.unavailable(err, "the write was not acknowledged");
        }
        if (this.replica.applied(entry.id)) return this.committed(outcomes, batch.length);
        if (++lostAnswers > 2) throw this.unavailable(err, "the write was not acknowledged");
        continue;
      }
      if (held === null) {
        await this.serial(() => this.replica.applyEntry(entry));
        return this.committed(outcomes, batch.length);
      }
      // Another server committed first (or an earlier try of ours did): catch up, then see.
      try {
        await this.serial(async () => void (await this.catchUp()));
      } catch (err) {
        throw this.unavailable(err, "the write was not acknowledged");
      }
      if (this.replica.applied(entry.id)) return this.committed(outcomes, batch.length);
    }
  }

  private committed(outcomes: Outcome[], ops: number): void {
    this.counters.batches++;
    this.counters.ops += ops;
    this.counters.largestBatch = Math.max(this.counters.largestBatch, ops);
    this.maybeSnapshot();
    settle(outcomes);
  }

  /** Runs `fn` after every apply queued before it (applies never interleave). */
  private serial(fn: () => void | Promise<void>): Promise<void> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The initial load: an older release's state migrated (schema_upgrade.ts), then the snapshot
   * and the log after it at one etcd revision; then the watch. */
  private async load(): Promise<void> {
    await upgradeEtcdSchema({ client: this.client, etcdLog: this.etcdLog, log: this.log });
    const revision = await this.reload();
    this.watcher = await this.etcdLog.watch(
      String(Number(revision) + 1),
      (kv) => this.onWatchPut(kv),
      (err) => this.onWatchError(err),
    );
  }

  /** Replaces the replica's rows with etcd's (snapshot + log); returns the revision read at. */
  private async reload(): Promise<string> {
    const { pointer, revision } = await this.etcdLog.readSnapPointer();
    let snapshot: (Dump & { index: number }) | undefined;
    if (pointer) {
      this.replica.rows.checkSchema(pointer.schema);
      snapshot = await this.etcdLog.readSnapshot(pointer, revision);
    }
    const { entries } = await this.etcdLog.readAfter(snapshot?.index ?? this.engine.index(), revision);
    if (this.closed) return revision;
    if (snapshot && snapshot.index > this.engine.index()) this.replica.restore(snapshot);
    this.snapIndex = pointer?.index ?? 0;
    for (const e of entries) this.replica.applyEntry(e);
    return revision;
  }

  private onWatchPut(kv: IKeyValue): void {
    const value = kv.value;
    const last = this.etcdLog.lastIndexOf(kv.key);
    void this.serial(async () => {
      // Already applied (this store's own commit, applied when etcd answered): nothing to decode.
      if (this.closed || last <= this.engine.index()) return;
      const entry = await this.etcdLog.decode(value);
      try {
        this.replica.applyEntry(entry);
      } catch (err) {
        if (!(err instanceof GapError)) throw err;
        await this.catchUp();
      }
    }).catch((err: unknown) =>
      this.log.warn("applying the etcd log failed; it is read again on the next commit", {
        error: describeEtcdError(err),
      }),
    );
  }

  /**
   * The client ended the watch (etcd cancelled it, e.g. its revision was compacted): catch up from
   * the log and watch again from there, retrying until it works or the store closes.
   */
  private onWatchError(err: Error): void {
    if (this.closed) return;
    this.log.warn("the etcd watch failed; reading the log again", { error: describeEtcdError(err) });
    void this.serial(async () => {
      const revision = await this.catchUp();
      if (this.closed) return;
      this.watcher = await this.etcdLog.watch(
        String(Number(revision) + 1),
        (kv) => this.onWatchPut(kv),
        (e) => this.onWatchError(e),
      );
    }).catch((e: unknown) => {
      setTimeout(() => this.onWatchError(e instanceof Error ? e : new Error(String(e))), 1_000).unref();
    });
  }

  /**
   * Reads and applies the log after the replica's index (reloading from the snapshot when that
   * part of the log was compacted away); returns the etcd revision the view is now at.
   */
  private async catchUp(): Promise<string> {
    if (this.closed) throw new Error("the state store is closed");
    const { entries, revision } = await this.etcdLog.readAfter(this.engine.index());
    try {
      for (const e of entries) this.replica.applyEntry(e);
      return revision;
    } catch (err) {
      if (!(err instanceof GapError)) throw err;
      this.log.warn("this server fell behind the etcd log's snapshot; reloading the state", {
        index: this.engine.index(),
      });
      const at = await this.reload();
      this.replica.wakeAll();
      return at;
    }
  }

  /** After an own commit: a snapshot once the log since the last one is long enough. */
  private maybeSnapshot(): void {
    const since = this.engine.index() - this.snapIndex;
    if (this.snapshotting || this.closed || since < this.snapshotEvery) return;
    this.snapshotting = true;
    const dump = this.replica.rows.dump();
    const index = this.engine.index();
    void (async () => {
      const now = await this.etcdLog.readSnapPointer();
      this.snapIndex = now.pointer?.index ?? 0;
      if (now.pointer && index - now.pointer.index < this.snapshotEvery) return;
      if (await this.etcdLog.writeSnapshot(dump, index, now.pointer, now.modRevision)) {
        this.snapIndex = index;
        this.log.info("state snapshot written to etcd; the log before it deleted", { index });
      }
    })()
      .catch((err: unknown) =>
        this.log.warn("writing a state snapshot to etcd failed", { error: describeEtcdError(err) }),
      )
      .finally(() => (this.snapshotting = false));
  }
}

/** The etcd StateStore (see the header): EtcdStore's own half and its engine's reads (engine/reads.ts). */
export type EtcdStateStore = EtcdStore & StoreReads;
export const EtcdStateStore = withEngineReads(EtcdStore, STORE_READS);

function settle(outcomes: Outcome[]): void {
  for (const o of outcomes) {
    if (o.ok) o.op.resolve(o.value);
    else o.op.reject(o.error);
  }
}
