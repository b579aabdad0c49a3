/**
 * Snapshots of the etcd store (`berth operator snapshot`), at the row level of its replicas:
 *
 * - Save: the snapshot pointer, the snapshot it names and the log after it, every read at ONE etcd
 *   revision (the revision of the first read), replayed into a fresh in-memory replica: the state
 *   as of that revision, whatever other servers commit meanwhile. Its database image is the
 *   payload (snapshot/image.ts), the same as the SQLite store's.
 * - Restore: the rows become the store's snapshot (log.ts restoreState) at index S, above every
 *   index etcd holds, with one log entry at S + 1 that touches every table; every server's replica
 *   (this one too) reloads from it and wakes its blocking queries. Committed only if P/index did not
 *   move since it was read: a restore never interleaves with another server's commit.
 */
import type { Logger } from "../../../internal/log.js";
import { TABLES } from "../tables.js";
import type { EtcdLog, LogEntry } from "./log.js";
import { EtcdReplica } from "./replica.js";
import type { Dump } from "./rows.js";

/** The state at one etcd revision: its database image, index and that revision. */
export async function readImageAtOneRevision(
  etcdLog: EtcdLog,
  log: Logger,
): Promise<{ image: Buffer; index: number; revision: string }> {
  const { pointer, revision } = await etcdLog.readSnapPointer();
  const replica = new EtcdReplica(Date.now, log);
  try {
    let from = 0;
    if (pointer) {
      replica.rows.checkSchema(pointer.schema);
      const snap = await etcdLog.readSnapshot(pointer, revision);
      replica.restore(snap);
      from = snap.index;
    }
    const { entries } = await etcdLog.readAfter(from, revision);
    for (const e of entries) replica.applyEntry(e);
    return { image: replica.image(), index: replica.engine.index(), revision };
  } finally {
    replica.close();
    replica.closeDatabase();
  }
}

/**
 * Writes `rows` (table → rows in the replica's column order, indexes not yet stamped) as the
 * cluster's state; returns the index the restore committed at (its entry's), once committed.
 * `stamp(rows, index)` sets the indexes to the snapshot index chosen here. Retries when another
 * server committed between the read and the write.
 */
export async function restoreIntoEtcd(
  etcdLog: EtcdLog,
  schema: number,
  snapshotIndex: number,
  rows: Map<string, unknown[][]>,
  stamp: (rows: Map<string, unknown[][]>, index: number) => void,
  signal: AbortSignal | undefined,
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const { pointer, modRevision } = await etcdLog.readSnapPointer();
    const { index: base } = await etcdLog.readIndex();
    const at = Math.max(snapshotIndex, base, pointer?.index ?? 0) + 1;
    stamp(rows, at);
    const dump: Dump = { schema, tables: Object.fromEntries(rows) };
    const entry: LogEntry = {
      schema,
      id: crypto.randomUUID(),
      txns: [{ i: at + 1, ops: [], tt: [...TABLES], k: [] }],
    };
    if (await etcdLog.restoreState(dump, entry, base, pointer, modRevision)) return at + 1;
    if (attempt >= 5) throw new Error("other servers kept committing; the restore was not written");
  }
}
