/**
 * The etcd store's layout in etcd, under its prefix P (default `/berth`):
 *
 *   P/index                  the last committed berth index (decimal); every commit compares it
 *   P/log/<last index>       one entry per committed batch: its txns' row ops (rows.ts), each
 *                            at its own berth index, keyed by the batch's last index (16 digits)
 *   P/blob/<last>-<id>/<n>   the chunks of an entry too large for one etcd value (written before
 *                            the commit that names them)
 *   P/snap                   the snapshot pointer: {id, index, chunks, schema}
 *   P/snapchunk/<id>/<n>     the snapshot's chunks: every replicated row at that index
 *
 * Why one log entry per batch: a scheduler txn can write 1,000 allocs, more than etcd's
 * `--max-txn-ops` (128) allows as keys; a commit here is always ONE etcd txn of 1 compare and 2
 * puts, whatever it writes. Entries are deflated; one whose value exceeds `maxValueBytes` (default
 * 1 MiB, under etcd's default `--max-request-bytes` of 1.5 MiB) goes to blob chunks first, so no
 * request exceeds the limit. A snapshot every `snapshotEvery` indexes deletes the log it covers, so
 * a starting server loads the snapshot and the log after it, never the whole history.
 *
 * Linearizability: a commit succeeds only when P/index still holds the index the txns ran on (the
 * replica's), so a txn's reads are those of the state it commits on (the simplest compare; finer
 * per-record compares would let unrelated writes of two servers both succeed, at the price of
 * sending what each txn read).
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { Etcd3, IKeyValue, Watcher } from "etcd3";
import type { WatchKey } from "../watch_keys.js";
import type { Table } from "../store.js";
import type { Dump, RowOp } from "./rows.js";

/** One txn of a batch: its index, its row ops, the tables it touched and its watch keys. */
export interface LogTxn {
  i: number;
  ops: RowOp[];
  tt: Table[];
  k: WatchKey[];
}

export interface LogEntry {
  schema: number;
  /** Unique per commit attempt: a store recognises its own entry after an unanswered commit. */
  id: string;
  txns: LogTxn[];
}

export interface SnapPointer {
  id: string;
  index: number;
  chunks: number;
  schema: number;
}

const INLINE = 0x7a; // "z": the deflated entry itself
const BLOBS = 0x62; // "b": {id, last, chunks} of an entry kept in blob chunks

const pad = (n: number) => String(n).padStart(16, "0");
const chunkKey = (n: number) => String(n).padStart(6, "0");

/** Entries read at once: bounded so a catch-up never asks for one huge response. */
const PAGE = 16;

export class EtcdLog {
  /** The cluster's prefix without a trailing slash (other keys live beside the log's under it). */
  readonly root: string;
  readonly indexKey: string;
  private readonly logDir: string;
  private readonly blobDir: string;
  private readonly snapKey: string;
  private readonly snapDir: string;

  constructor(
    private readonly client: Etcd3,
    prefix: string,
    private readonly maxValueBytes: number,
  ) {
    const p = prefix.replace(/\/+$/, "");
    this.root = p;
    this.indexKey = `${p}/index`;
    this.logDir = `${p}/log/`;
    this.blobDir = `${p}/blob/`;
    this.snapKey = `${p}/snap`;
    this.snapDir = `${p}/snapchunk/`;
  }

  logKey(last: number): string {
    return this.logDir + pad(last);
  }

  /** The last index of the entry stored under a log key (NaN for another key). */
  lastIndexOf(key: Buffer): number {
    const k = key.toString();
    return k.startsWith(this.logDir) ? Number(k.slice(this.logDir.length)) : Number.NaN;
  }

  /**
   * One commit: writes the entry at P/log/<last> and moves P/index from `base` to `last`, only if
   * P/index is still `base`. Returns null on success, else the index etcd holds.
   */
  async commit(base: number, entry: LogEntry): Promise<number | null> {
    const last = entry.txns[entry.txns.length - 1]!.i;
    const value = await this.encode(entry, last);
    const cmp =
      base === 0
        ? this.client.if(this.indexKey, "Version", "==", 0)
        : this.client.if(this.indexKey, "Value", "==", String(base));
    const res = await cmp
      .then(
        this.client.put(this.indexKey).value(String(last)),
        this.client.put(this.logKey(last)).value(value),
      )
      .else(this.client.get(this.indexKey))
      .commit();
    if (res.succeeded) return null;
    if (value[0] === BLOBS) await this.client.delete().prefix(this.blobPrefix(last, entry.id)).exec();
    const kv = res.responses[0]?.response_range?.kvs[0];
    return kv ? Number(kv.value.toString()) : 0;
  }

  /**
   * The entries holding txns above `index`, oldest first, all read at one revision (`revision`
   * when given, else the first page's), and that revision.
   */
  async readAfter(index: number, revision?: string): Promise<{ entries: LogEntry[]; revision: string }> {
    const entries: LogEntry[] = [];
    let start = this.logKey(index + 1);
    const end = this.logDir + "\uffff";
    let at = revision;
    for (;;) {
      let q = this.client.getAll().inRange({ start, end }).limit(PAGE);
      if (at) q = q.revision(at);
      const res = await q.exec();
      at ??= res.header.revision;
      for (const kv of res.kvs) entries.push(await this.decode(kv.value, at));
      if (!res.more || res.kvs.length === 0) return { entries, revision: at };
      start = res.kvs[res.kvs.length - 1]!.key.toString() + "\u0000";
    }
  }

  /** The snapshot pointer and the revision the read was at (the base of a consistent load). */
  async readSnapPointer(): Promise<{
    pointer: SnapPointer | undefined;
    revision: string;
    modRevision: string;
  }> {
    const res = await this.client.get(this.snapKey).exec();
    const kv = res.kvs[0];
    return {
      pointer: kv ? (JSON.parse(kv.value.toString()) as SnapPointer) : undefined,
      revision: res.header.revision,
      modRevision: kv?.mod_revision ?? "0",
    };
  }

  async readSnapshot(p: SnapPointer, revision: string): Promise<Dump & { index: number }> {
    const body = await this.readChunks(`${this.snapDir}${p.id}/`, p.chunks, revision);
    return JSON.parse(inflateRawSync(body).toString()) as Dump & { index: number };
  }

  /**
   * Writes a snapshot of the replica at `index` and deletes the log (and blobs) it covers, only if
   * the snapshot pointer is still the one read at `modRevision` (two servers may race: one wins).
   */
  async writeSnapshot(
    dump: Dump,
    index: number,
    prev: SnapPointer | undefined,
    modRevision: string,
  ): Promise<boolean> {
    const id = crypto.randomUUID();
    const body = deflateRawSync(Buffer.from(JSON.stringify({ ...dump, index })));
    const dir = `${this.snapDir}${id}/`;
    const chunks = await this.writeChunks(dir, body);
    const pointer: SnapPointer = { id, index, chunks, schema: dump.schema };
    const ops = [
      this.client.put(this.snapKey).value(JSON.stringify(pointer)),
      this.client.delete().inRange({ start: this.logDir, end: this.logKey(index + 1) }),
      this.client.delete().inRange({ start: this.blobDir, end: this.blobDir + pad(index + 1) }),
    ];
    if (prev) ops.push(this.client.delete().prefix(`${this.snapDir}${prev.id}/`));
    const res = await this.client
      .if(this.snapKey, "Mod", "==", Number(modRevision))
      .then(...ops)
      .commit();
    if (!res.succeeded) await this.client.delete().prefix(dir).exec();
    return res.succeeded;
  }

  /** P/index as etcd holds it now, or at `revision` (0 when never written), and the revision read at. */
  async readIndex(revision?: string): Promise<{ index: number; revision: string }> {
    let q = this.client.get(this.indexKey);
    if (revision) q = q.revision(revision);
    const res = await q.exec();
    const kv = res.kvs[0];
    return { index: kv ? Number(kv.value.toString()) : 0, revision: res.header.revision };
  }

  /**
   * A snapshot restore (etcd_snapshot.ts): writes `dump` as the snapshot at `entry`'s index − 1,
   * then in ONE etcd txn, only if P/index is still `base` and the snapshot pointer still the one
   * read at `modRevision`: points P/snap at it, deletes the whole log, its blobs and the previous
   * snapshot, and commits `entry` (its one txn touching every table) as the log's only entry.
   * Every replica then meets a gap, reloads from the new snapshot and applies the entry, which
   * wakes its blocking queries. Returns false (and leaves nothing behind) when another write won.
   */
  async restoreState(
    dump: Dump,
    entry: LogEntry,
    base: number,
    prev: SnapPointer | undefined,
    modRevision: string,
  ): Promise<boolean> {
    const last = entry.txns[entry.txns.length - 1]!.i;
    const id = crypto.randomUUID();
    const body = deflateRawSync(Buffer.from(JSON.stringify({ ...dump, index: last - 1 })));
    const dir = `${this.snapDir}${id}/`;
    const chunks = await this.writeChunks(dir, body);
    const pointer: SnapPointer = { id, index: last - 1, chunks, schema: dump.schema };
    const value = Buffer.concat([Buffer.from([INLINE]), deflateRawSync(Buffer.from(JSON.stringify(entry)))]);
    const ops = [
      this.client.put(this.snapKey).value(JSON.stringify(pointer)),
      this.client.delete().inRange({ start: this.logDir, end: this.logKey(last) }),
      this.client.delete().inRange({ start: this.blobDir, end: this.blobDir + "\uffff" }),
      this.client.put(this.indexKey).value(String(last)),
      this.client.put(this.logKey(last)).value(value),
    ];
    if (prev) ops.push(this.client.delete().prefix(`${this.snapDir}${prev.id}/`));
    const indexIs =
      base === 0
        ? this.client.if(this.indexKey, "Version", "==", 0)
        : this.client.if(this.indexKey, "Value", "==", String(base));
    const res = await indexIs
      .and(this.snapKey, "Mod", "==", Number(modRevision))
      .then(...ops)
      .commit();
    if (!res.succeeded) await this.client.delete().prefix(dir).exec();
    return res.succeeded;
  }

  /** Watches new log entries from `revision` on; `onPut` gets each entry's raw value in order. */
  async watch(
    fromRevision: string,
    onPut: (kv: IKeyValue) => void,
    onError: (err: Error) => void,
  ): Promise<Watcher> {
    const w = await this.client.watch().prefix(this.logDir).startRevision(fromRevision).create();
    w.on("put", (kv) => onPut(kv));
    w.on("error", (err) => onError(err));
    return w;
  }

  /** An entry from its stored value (its blob chunks read, at `revision` when given). */
  async decode(value: Buffer, revision?: string): Promise<LogEntry> {
    if (value[0] === INLINE) return JSON.parse(inflateRawSync(value.subarray(1)).toString()) as LogEntry;
    if (value[0] !== BLOBS) throw new Error("unrecognised log entry in etcd (not written by berth?)");
    const ref = JSON.parse(value.subarray(1).toString()) as { id: string; last: number; chunks: number };
    const body = await this.readChunks(this.blobPrefix(ref.last, ref.id), ref.chunks, revision);
    return JSON.parse(inflateRawSync(body).toString()) as LogEntry;
  }

  /** The inline value, or blob chunks written first and a small reference as the value. */
  private async encode(entry: LogEntry, last: number): Promise<Buffer> {
    const body = deflateRawSync(Buffer.from(JSON.stringify(entry)));
    if (body.length + 1 <= this.maxValueBytes) return Buffer.concat([Buffer.from([INLINE]), body]);
    const chunks = await this.writeChunks(this.blobPrefix(last, entry.id), body);
    const ref = JSON.stringify({ id: entry.id, last, chunks });
    return Buffer.concat([Buffer.from([BLOBS]), Buffer.from(ref)]);
  }

  private blobPrefix(last: number, id: string): string {
    return `${this.blobDir}${pad(last)}-${id}/`;
  }

  private async writeChunks(dir: string, body: Buffer): Promise<number> {
    let n = 0;
    for (let at = 0; at < body.length || n === 0; at += this.maxValueBytes) {
      await this.client.put(dir + chunkKey(n)).value(body.subarray(at, at + this.maxValueBytes));
      n++;
    }
    return n;
  }

  private async readChunks(dir: string, count: number, revision?: string): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let n = 0; n < count; n++) {
      let q = this.client.get(dir + chunkKey(n));
      if (revision) q = q.revision(revision);
      const v = await q.buffer();
      if (!v) throw new Error(`chunk ${dir}${chunkKey(n)} is missing from etcd`);
      parts.push(v);
    }
    return Buffer.concat(parts);
  }
}
