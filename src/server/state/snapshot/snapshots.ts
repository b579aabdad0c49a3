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
import { migrate, SCHEMA_VERSION } from "../engine/schema.js";
import type { StateStore } from "../store.js";
import { decodeSnapshot, encodeSnapshot, type HeaderFields, type SnapshotHeader } from "./format.js";
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

/**
 * A snapshot of the state now: the file's bytes and its header. The image's bytes are read and
 * gzipped off the event loop where they can be (the SQLite copy is a file); what stays on it is
 * one pass over the rows for the header's counts.
 */
export async function saveSnapshot(ctx: SnapshotContext): Promise<{ file: Buffer; header: SnapshotHeader }> {
  const keystore = keystoreOf(ctx);
  if (ctx.store instanceof SqliteStateStore) {
    const tmp = path.join(ctx.dataDir!, `snapshot-${randomUUID()}.db`);
    try {
      await ctx.store.backupTo(tmp);
      const copy = new Database(tmp);
      let fields: HeaderFields;
      try {
        // The copy is in WAL mode, as the state file is; a WAL database does not open from an
        // image, so the file becomes a plain one (its WAL checkpointed into it) first.
        copy.pragma("journal_mode = DELETE");
        fields = describe(copy, ctx, "sqlite", 0);
      } finally {
        copy.close();
      }
      ctx.signal?.throwIfAborted();
      return encodeSnapshot(fields, await gzipAsync(await fs.promises.readFile(tmp)));
    } finally {
      for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) fs.rmSync(f, { force: true });
    }
  }
  if (ctx.store instanceof EtcdStateStore) {
    const read = await ctx.store.readImage();
    const image = new Database(read.image);
    try {
      // The rows came from etcd with their secrets as records: sealed here, and no clear copy
      // left in the image's free pages.
      image.pragma("secure_delete = ON");
      sealImageSecrets(image, secretsWith(keyringNow(keystore, true)));
      image.exec("VACUUM");
      const fields = describe(image, ctx, "etcd", Number(read.revision));
      ctx.signal?.throwIfAborted();
      return encodeSnapshot(fields, await gzipAsync(image.serialize()));
    } finally {
      image.close();
    }
  }
  throw new BerthError("ERR_INTERNAL", "snapshot: this state store cannot be snapshotted");
}

/** The header's fields for an image. */
function describe(
  image: Database.Database,
  ctx: SnapshotContext,
  mode: SnapshotHeader["Mode"],
  term: number,
): HeaderFields {
  const index = imageIndex(image);
  const created = Date.now();
  return {
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
  const image = await openPayload(payload, SCHEMA_VERSION);
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
