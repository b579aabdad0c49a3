/**
 * The rotation writer of a task's log stream (Nomad's logging.FileRotator): appends to
 * `<base>.<n>`; when that file holds `maxFileBytes`, the next byte goes to `<base>.<n+1>` (a write
 * is split at the boundary, so every rotated file is exactly full), and then the files older than
 * the newest `maxFiles` are deleted. Opened on an existing dir it continues the newest file (a new
 * collector after a task restart appends where the last stopped), rotating first when it is full.
 *
 * Files are opened and deleted through the logs dir reached without links (no_follow.ts); only a
 * regular file with one link is appended to. One writer per stream: the caller serialises write().
 */
import type fs from "node:fs/promises";
import { unlink } from "node:fs/promises";
import { openAppendNoFollow, openDirNoFollow } from "../allocdir/no_follow.js";
import { atDir, indexesIn } from "./log_files.js";

export interface RotatorOptions {
  /** The logs dir is `anchor/rel…`; anchor is a dir no task can replace (the alloc dir). */
  anchor: string;
  rel: readonly string[];
  /** `<task>.<type>` (log_files.ts logBase). */
  base: string;
  /** At least 1. */
  maxFiles: number;
  /** At least 1. */
  maxFileBytes: number;
}

export class RotatingWriter {
  private fh: fs.FileHandle | null = null;
  private size = 0;

  private constructor(
    private readonly o: RotatorOptions,
    private index: number,
  ) {}

  /** A writer continuing the newest `<base>.<n>` of the dir (index 0 when there is none). */
  static async open(o: RotatorOptions): Promise<RotatingWriter> {
    if (!(o.maxFiles >= 1 && o.maxFileBytes >= 1)) throw new Error("maxFiles and maxFileBytes must be ≥ 1");
    const dir = await openDirNoFollow(o.anchor, o.rel, { create: true });
    let newest: number;
    try {
      newest = (await indexesIn(dir, o.base)).at(-1) ?? 0;
    } finally {
      await dir.close();
    }
    const w = new RotatingWriter(o, newest);
    await w.openCurrent();
    await w.purge();
    return w;
  }

  /** The index of the file being written. */
  get currentIndex(): number {
    return this.index;
  }

  /** Appends all of `buf`, rotating as often as it needs. */
  async write(buf: Uint8Array): Promise<void> {
    let off = 0;
    while (off < buf.length) {
      if (this.size >= this.o.maxFileBytes) await this.rotate();
      const n = Math.min(this.o.maxFileBytes - this.size, buf.length - off);
      await writeAll(this.file(), buf, off, n);
      this.size += n;
      off += n;
    }
  }

  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    await fh?.close();
  }

  private file(): fs.FileHandle {
    if (!this.fh) throw new Error("log writer is closed");
    return this.fh;
  }

  private async openCurrent(): Promise<void> {
    const fh = await openAppendNoFollow(this.o.anchor, this.o.rel, `${this.o.base}.${this.index}`);
    this.fh = fh;
    this.size = (await fh.stat()).size;
  }

  private async rotate(): Promise<void> {
    await this.close();
    this.index++;
    await this.openCurrent();
    await this.purge();
  }

  /** Deletes `<base>.<n>` for every n older than the newest maxFiles (n ≤ index − maxFiles). */
  private async purge(): Promise<void> {
    const oldest = this.index - this.o.maxFiles;
    if (oldest < 0) return;
    const dir = await openDirNoFollow(this.o.anchor, this.o.rel);
    try {
      for (const n of await indexesIn(dir, this.o.base)) {
        if (n > oldest) break;
        await unlink(atDir(dir, `${this.o.base}.${n}`)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
      }
    } finally {
      await dir.close();
    }
  }
}

async function writeAll(fh: fs.FileHandle, buf: Uint8Array, off: number, len: number): Promise<void> {
  while (len > 0) {
    const { bytesWritten } = await fh.write(buf, off, len);
    off += bytesWritten;
    len -= bytesWritten;
  }
}
