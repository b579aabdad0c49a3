/**
 * Moves the state kept in etcd (log.ts) to this release's schema when a server of a newer release
 * starts on a cluster an older release wrote. The SQLite store migrates its file in place
 * (engine/schema.ts); on etcd every server's replica reads the same snapshot and log, whose rows
 * carry the schema they were written with, and a replica refuses rows of another schema (rows.ts).
 * So the first server of the new release rewrites the state once:
 *
 * 1. it reads the snapshot pointer, the snapshot and the log after it at ONE etcd revision;
 * 2. while a server is registered under `<prefix>/ha/servers/` (leader/keys.ts: every live server,
 *    bound to its lease), it waits: that server runs the older release (a server of this release
 *    would have found the state migrated) and would refuse the migrated rows, so the operator stops
 *    every old server first (README "Upgrading"); it says so in its log every few seconds;
 * 3. it replays the rows into a database at the old schema, runs this release's migrations on it
 *    (the same steps a state file takes), and writes the result as the state's snapshot with one
 *    log entry after it, as a snapshot restore does (etcd_snapshot.ts) — committed only if etcd's
 *    index and snapshot pointer are still those it read, so no write of another server is lost; a
 *    write meanwhile makes it read again.
 *
 * State of a NEWER schema than this release is refused by the caller's schema check (a downgrade).
 * Records keep their CreateIndex and ModifyIndex; the store's and every table's index move past
 * the last committed one, so blocking queries started before the upgrade read again.
 */
import Database from "better-sqlite3";
import type { Etcd3 } from "etcd3";
import { sleep } from "../../../internal/abort.js";
import type { Logger } from "../../../internal/log.js";
import { migrate, SCHEMA_VERSION } from "../engine/schema.js";
import { rowsForLive, stampIndexes } from "../snapshot/replace.js";
import { TABLES } from "../tables.js";
import type { EtcdLog, LogEntry } from "./log.js";
import { ReplicaRows, type Dump } from "./rows.js";

/** How often a server waiting for older servers to stop looks again (and logs). */
const WAIT_MS = 5_000;

/**
 * Migrates etcd's state to this release's schema when it is older (see above); resolves `false`
 * when there was nothing to do (no state yet, or already this schema, or newer: the caller refuses).
 */
export async function upgradeEtcdSchema(opts: {
  client: Etcd3;
  etcdLog: EtcdLog;
  log: Logger;
  signal?: AbortSignal;
}): Promise<boolean> {
  const target = SCHEMA_VERSION;
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    const { pointer, revision, modRevision } = await opts.etcdLog.readSnapPointer();
    const snapshot = pointer ? await opts.etcdLog.readSnapshot(pointer, revision) : undefined;
    const { entries } = await opts.etcdLog.readAfter(snapshot?.index ?? 0, revision);
    const from = pointer?.schema ?? entries[0]?.schema;
    if (from === undefined || from >= target) return false;

    const others = await liveServers(opts.client, opts.etcdLog.root);
    if (others.length > 0) {
      opts.log.warn(
        `the state in etcd has schema version ${from} and this server's is ${target}: waiting for ` +
          `the servers of the older release to stop before migrating it (${others.join(", ")})`,
      );
      await sleep(WAIT_MS, opts.signal);
      continue;
    }

    const { index: base } = await opts.etcdLog.readIndex(revision);
    const { dump, index } = migratedDump(snapshot, entries, from, target, base);
    const at = index + 1;
    const entry: LogEntry = {
      schema: target,
      id: crypto.randomUUID(),
      txns: [{ i: at + 1, ops: [], tt: [...TABLES], k: [] }],
    };
    if (await opts.etcdLog.restoreState(dump, entry, base, pointer, modRevision)) {
      opts.log.info(`migrated the state in etcd from schema version ${from} to ${target}`, {
        index: at + 1,
      });
      return true;
    }
    if (attempt >= 5) throw new Error("other servers kept committing; the state in etcd was not migrated");
  }
}

/**
 * The snapshot and log (all of schema `from`) replayed into a database at that schema, migrated to
 * `target`, as a dump at `target` with its indexes stamped past the last committed index (the
 * greatest of the snapshot's, the log's and etcd's `committed` index key).
 */
function migratedDump(
  snapshot: (Dump & { index: number }) | undefined,
  entries: readonly LogEntry[],
  from: number,
  target: number,
  committed: number,
): { dump: Dump; index: number } {
  const old = new Database(":memory:");
  let image: Buffer;
  let index = Math.max(snapshot?.index ?? 0, committed);
  try {
    migrate(old, from);
    const rows = new ReplicaRows(old);
    old.transaction(() => {
      if (snapshot) rows.restore(snapshot);
      for (const e of entries) {
        rows.checkSchema(e.schema);
        for (const t of e.txns) {
          rows.apply(t.ops);
          index = Math.max(index, t.i);
        }
      }
    })();
    // A fresh copy without the replica's capture triggers, which the migrations must not see.
    image = old.serialize();
  } finally {
    old.close();
  }
  const migrated = new Database(image);
  const live = new Database(":memory:");
  try {
    migrate(migrated);
    migrate(live);
    const tables = rowsForLive(live, migrated);
    stampIndexes(tables, index + 1);
    return { dump: { schema: target, tables: Object.fromEntries(tables) }, index };
  } finally {
    migrated.close();
    live.close();
  }
}

/** The IDs of the servers registered in etcd (each bound to its lease: only live ones). */
async function liveServers(client: Etcd3, root: string): Promise<string[]> {
  const dir = `${root}/ha/servers/`;
  const keys = await client.getAll().prefix(dir).keys();
  return keys.map((k) => k.slice(dir.length));
}
