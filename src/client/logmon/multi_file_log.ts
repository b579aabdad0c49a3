/**
 * A task's rotated log files `<base>.<n>` (rotator.ts) read as one stream: where an offset from
 * the start (the oldest kept file's first byte) or from the end (the newest file's last byte)
 * falls, and one window of one file from there. The answer names the file and says whether a
 * later one exists — seen BEFORE the file's size is read, so a file with a successor is whole and
 * a reader that reached its size goes on at the successor's byte 0 without missing a byte.
 *
 * Files are listed and opened without following links (no_follow.ts). A file the rotator deletes
 * while it is being located counts as empty; one deleted before it is read is skipped for the next.
 */
import type fs from "node:fs/promises";
import { openReadNoFollow } from "../allocdir/no_follow.js";
import { listIndexes } from "./log_files.js";

export interface LogDir {
  anchor: string;
  rel: readonly string[];
  /** `<task>.<type>`. */
  base: string;
}

export interface WindowQuery {
  offset: number;
  origin: "start" | "end";
  /** Read this file from `offset` (origin ignored); see AllocReadLogRequest.Index. */
  index?: number | undefined;
  limit: number;
}

export interface LogWindow {
  data: Buffer;
  /** Offset of `data` in file `index`. */
  offset: number;
  /** File `index`'s size when read. */
  size: number;
  index: number;
  /** A later file exists: file `index` will not grow. */
  next: boolean;
}

/** Tries after a file vanished under the read (each vanishing means a rotation happened). */
const MAX_TRIES = 8;

export async function readLogWindow(d: LogDir, q: WindowQuery): Promise<LogWindow> {
  for (let tries = 0; ; tries++) {
    const indexes = await listIndexes(d.anchor, d.rel, d.base);
    const at = await locate(d, indexes, q);
    if (at === null) {
      const index = q.index ?? 0;
      return { data: Buffer.alloc(0), offset: 0, size: 0, index, next: false };
    }
    const w = await readAt(d, indexes[at.i]!, at.offset, q.limit, at.i < indexes.length - 1);
    if (w) return w;
    if (tries >= MAX_TRIES) throw new Error(`${d.base}: the log files rotate faster than they can be read`);
    // Rotated away before it was read: go on at the next file.
    q = { ...q, index: indexes[at.i]! + 1, offset: 0 };
  }
}

/** Which of `indexes` (position) and where in it the query starts; null when there is no file. */
async function locate(
  d: LogDir,
  indexes: number[],
  q: WindowQuery,
): Promise<{ i: number; offset: number } | null> {
  if (indexes.length === 0) return null;
  if (q.index !== undefined) {
    const wanted = q.index;
    const i = indexes.findIndex((n) => n >= wanted);
    if (i < 0) return null;
    return { i, offset: indexes[i] === wanted ? q.offset : 0 };
  }
  const last = indexes.length - 1;
  if (q.origin === "start") {
    let left = q.offset;
    for (let i = 0; i < last; i++) {
      const size = await sizeOf(d, indexes[i]!);
      if (left < size) return { i, offset: left };
      left -= size;
    }
    return { i: last, offset: left };
  }
  let back = q.offset;
  for (let i = last; ; i--) {
    const size = await sizeOf(d, indexes[i]!);
    // Past the oldest file's start: from its start (readAt clamps the offset).
    if (back <= size || i === 0) return { i, offset: size - back };
    back -= size;
  }
}

/** The window of file `index` from `offset` (clamped to the file); null when the file is gone. */
async function readAt(
  d: LogDir,
  index: number,
  offset: number,
  limit: number,
  next: boolean,
): Promise<LogWindow | null> {
  const fh = await openFile(d, index);
  if (!fh) return null;
  try {
    const size = (await fh.stat()).size;
    const from = Math.max(0, Math.min(offset, size));
    const want = Math.max(0, Math.min(limit, size - from));
    const buf = Buffer.alloc(want);
    const { bytesRead } = await fh.read(buf, 0, want, from);
    return { data: buf.subarray(0, bytesRead), offset: from, size, index, next };
  } finally {
    await fh.close();
  }
}

async function sizeOf(d: LogDir, index: number): Promise<number> {
  const fh = await openFile(d, index);
  if (!fh) return 0;
  try {
    return (await fh.stat()).size;
  } finally {
    await fh.close();
  }
}

async function openFile(d: LogDir, index: number): Promise<fs.FileHandle | null> {
  try {
    return await openReadNoFollow(d.anchor, d.rel, `${d.base}.${index}`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
