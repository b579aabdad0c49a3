/**
 * Snapshot save and restore over either store (the operator's backup: `/v1/operator/snapshot`).
 * format.ts is the file, image.ts its payload, secrets.ts the keyring's part, replace.ts the rows
 * a restore writes. Like open_store.ts this is where the store's kind is told apart.
 *
 * Save: a consistent image while the server serves (SQLite: the online backup into a temp file in
 * the data dir, removed after; etcd: the prefix at one revision), its secrets sealed, gzipped,
 * with the header. Restore: the whole file is checked (format.ts), the image opened and moved to
 * this schema, every sealed secret opened with the keyring as it is on disk now — all before
 * anything changes; then every row is replaced in one transaction (SQLite) or one etcd txn, at an
 * index above the snapshot's and the store's (replace.ts).
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { gzip } from "node:zlib";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { BerthError } from "../../../structs/errors.js";
import type { Logger } from "../../../internal/log.js";
import { EtcdStateStore } from "../etcd/etcd_store.js";
import { SqliteStateStore } from "../local/sqlite_store.js";
import { migrate } from "../engine/schema.js";
import type { StateStore } from "../store.js";
import { decodeSnapshot, encodeSnapshot, type SnapshotHeader } from "./format.js";
import { imageIndex, imageKeyIds, imageSchema, imageTypes, openPayload } from "./image.js";
import { rowsForLive, stampIndexes, writeRows } from "./replace.js";
import { checkImageSecrets, keyringNow, openImageSecrets, sealImageSecrets, secretsWith } from "./secrets.js";

const gzipAsync = promisify(gzip);

export interface SnapshotContext {
  store: StateStore;
  /** The server's data dir: the keyring lives in `<dataDir>/keystore` (null: none). */
  dataDir: string | null;
  berthVersion: string;
  log: Logger;
  signal?: AbortSignal | undefined;
}

/** The schema this berth writes (a migrated empty database's version). */
export function currentSchema(): number {
  const db = new Database(":memory:");
  try {
    migrate(db);
    return imageSchema(db);
  } finally {
    db.close();
  }
}

function keystoreOf(ctx: SnapshotContext): string {
  if (ctx.dataDir === null) {
    throw new BerthError(
      "ERR_VALIDATION",
      "snapshot: this server has no data dir, so no keyring to seal or open a snapshot's secrets with",
      { field: "snapshot" },
    );
  }
  return path.join(ctx.dataDir, "keystore");
}

/** A snapshot of the state now: the file's bytes and its header. */
export async function saveSnapshot(ctx: SnapshotContext): Promise<{ file: Buffer; header: SnapshotHeader }> {
  const keystore = keystoreOf(ctx);
  let image: Database.Database;
  let mode: SnapshotHeader["Mode"];
  let term = 0;
  if (ctx.store instanceof SqliteStateStore) {
    mode = "sqlite";
    image = await backupImage(ctx.store, ctx.dataDir!);
  } else if (ctx.store instanceof EtcdStateStore) {
    mode = "etcd";
    const read = await ctx.store.readImage();
    term = Number(read.revision);
    image = new Database(read.image);
    // The rows came from etcd with their secrets as records: sealed here, and no clear copy left
    // in the image's free pages.
    image.pragma("secure_delete = ON");
    sealImageSecrets(image, secretsWith(keyringNow(keystore, true)));
    image.exec("VACUUM");
  } else {
    throw new BerthError("ERR_INTERNAL", "snapshot: this state store cannot be snapshotted");
  }
  try {
    ctx.signal?.throwIfAborted();
    const index = imageIndex(image);
    const created = Date.now();
    const fields = {
      ID: `${index}-${term}-${created}`,
      BerthVersion: ctx.berthVersion,
      Mode: mode,
      Index: index,
      Term: term,
      Schema: imageSchema(image),
      CreatedAt: new Date(created).toISOString(),
      KeyIDs: imageKeyIds(image),
      Types: imageTypes(image),
    };
    const payload = await gzipAsync(image.serialize());
    return encodeSnapshot(fields, payload);
  } finally {
    image.close();
  }
}

/** The SQLite store's online backup, opened in memory (the temp file removed at once). */
async function backupImage(store: SqliteStateStore, dataDir: string): Promise<Database.Database> {
  const tmp = path.join(dataDir, `snapshot-${randomUUID()}.db`);
  try {
    await store.backupTo(tmp);
    // The copy is in WAL mode, as the state file; a WAL database does not open from an image.
    const copy = new Database(tmp);
    let image: Buffer;
    try {
      copy.pragma("journal_mode = DELETE");
      image = copy.serialize();
    } finally {
      copy.close();
    }
    return new Database(image);
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) fs.rmSync(f, { force: true });
  }
}

/**
 * Restores `file` into the store. Returns the snapshot's header and the store's index after the
 * restore. Refused, with nothing changed, when the file, its state or its secrets do not check.
 */
export async function restoreSnapshot(
  ctx: SnapshotContext,
  file: Buffer,
): Promise<{ header: SnapshotHeader; index: number }> {
  const { header, payload } = decodeSnapshot(file);
  const keystore = keystoreOf(ctx);
  const image = await openPayload(payload, currentSchema());
  try {
    const keyring = keyringNow(keystore, false);
    const atRest = secretsWith(keyring);
    checkImageSecrets(image, atRest);
    const snapIndex = imageIndex(image);
    const store = ctx.store;
    if (store instanceof SqliteStateStore) {
      let index = 0;
      store.replaceState((live) => {
        const rows = rowsForLive(live, image);
        index = Math.max(snapIndex, store.index()) + 1;
        stampIndexes(rows, index);
        writeRows(live, rows);
      }, keyring);
      ctx.log.info("state restored from a snapshot", { snapshot: header.ID, index });
      return { header, index };
    }
    if (store instanceof EtcdStateStore) {
      // etcd keeps secrets as records: opened here (they were checked above).
      openImageSecrets(image, atRest);
      const live = new Database(":memory:");
      let rows: Map<string, unknown[][]>;
      try {
        migrate(live);
        rows = rowsForLive(live, image);
      } finally {
        live.close();
      }
      const index = await store.replaceState(rows, snapIndex, stampIndexes, ctx.signal);
      ctx.log.info("state restored from a snapshot", { snapshot: header.ID, index });
      return { header, index };
    }
    throw new BerthError("ERR_INTERNAL", "snapshot: this state store cannot be restored");
  } finally {
    image.close();
  }
}
