/**
 * A container's output into the task's stdout/stderr files (what `alloc logs [-f]` reads), from
 * the Engine's log stream (`follow`, `timestamps`): the stream ends when the container has stopped
 * and everything it wrote was delivered.
 *
 * The stream is Docker's multiplexed format (container_spec.ts never asks for a TTY): frames of an
 * 8-byte header (stream 1 stdout / 2 stderr, 3 zero bytes, a big-endian uint32 length) and a
 * payload; with `timestamps` each log message is one frame beginning with its RFC 3339 time and a
 * space, which is stripped before the message is appended.
 *
 * Re-attached after an agent restart, the stream starts just after the newest write to either
 * file and drops messages timed at or before that instant, so lines are not written twice. A file's
 * mtime comes from the kernel's coarse clock (a tick, a few milliseconds, behind the fine clock
 * Docker stamps messages with), so the instant is the mtime plus MTIME_SLACK_NS: a message the
 * container wrote within that slack after the old agent's last write, and that agent never wrote,
 * is lost — never duplicated. (Exactly-once would compare the files' tails with the messages of
 * that window; not done.)
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { DEFAULT_LOG_CONFIG } from "../../../structs/log_config.js";
import { listIndexes } from "../../logmon/log_files.js";
import { RotatingWriter } from "../../logmon/rotator.js";

export interface LogFrame {
  stream: 1 | 2;
  payload: Buffer;
}

/** Splits Docker's multiplexed stream into frames; feed it chunks as they come. */
export class FrameParser {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): LogFrame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: LogFrame[] = [];
    while (this.buf.length >= 8) {
      const size = this.buf.readUInt32BE(4);
      if (this.buf.length < 8 + size) break;
      const kind = this.buf[0];
      const payload = this.buf.subarray(8, 8 + size);
      // 0 is stdin (never asked for): counted as stdout rather than dropped.
      out.push({ stream: kind === 2 ? 2 : 1, payload });
      this.buf = this.buf.subarray(8 + size);
    }
    return out;
  }
}

/** A frame's timestamp (nanoseconds since the epoch) and message; null time when it has none. */
export function splitTimestamp(payload: Buffer): { ns: bigint | null; message: Buffer } {
  const space = payload.indexOf(0x20);
  if (space < 20 || space > 40) return { ns: null, message: payload };
  const ns = rfc3339Ns(payload.subarray(0, space).toString("latin1"));
  return ns === null ? { ns: null, message: payload } : { ns, message: payload.subarray(space + 1) };
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** Nanoseconds since the epoch of an RFC 3339 time with up to 9 fractional digits; null if not one. */
export function rfc3339Ns(text: string): bigint | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (!Number.isFinite(ms)) return null;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

/** Docker's `since` for a time in nanoseconds: "seconds.nanoseconds". */
export function sinceParam(ns: bigint): string {
  return `${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`;
}

/** More than a coarse-clock tick (CONFIG_HZ=100: 10 ms) between a message's stamp and the mtime. */
export const MTIME_SLACK_NS = 25_000_000n;

/**
 * Where the container's output goes: the task's `<task>.<type>.0` paths (task_start.ts), rotated
 * as the task's `logs` stanza says (logmon/rotator.ts: `<task>.<type>.<n>`, at most `maxFiles` of
 * `maxFileBytes`; absent: Nomad's defaults), or /dev/null when logging is disabled.
 */
export interface LogTargets {
  stdoutPath: string;
  stderrPath: string;
  maxFiles?: number;
  maxFileBytes?: number;
}

/**
 * The instant after which nothing was written to the task's log files (nanoseconds): the newest
 * mtime of the newest rotated file of each stream plus MTIME_SLACK_NS; 0n when nothing was written.
 */
export async function lastLogWriteNs(stdoutPath: string, stderrPath: string): Promise<bigint> {
  let newest = 0n;
  for (const p of [stdoutPath, stderrPath]) {
    const st = await fs.stat(await newestFile(p), { bigint: true }).catch(() => null);
    if (st && st.size > 0n && st.mtimeNs > newest) newest = st.mtimeNs;
  }
  return newest === 0n ? 0n : newest + MTIME_SLACK_NS;
}

/** The newest `<base>.<n>` beside the `<base>.0` path `p` (p itself when it is not one such). */
async function newestFile(p: string): Promise<string> {
  const t = rotation(p);
  if (!t) return p;
  const n = (await listIndexes(t.anchor, t.rel, t.base).catch(() => [])).at(-1) ?? 0;
  return path.join(path.dirname(p), `${t.base}.${n}`);
}

/** `<alloc dir>/<task>/logs/<base>.0` as the rotator addresses it; null for another path. */
function rotation(p: string): { anchor: string; rel: string[]; base: string } | null {
  const logsDir = path.dirname(p);
  const taskDir = path.dirname(logsDir);
  if (!p.endsWith(".0") || path.basename(logsDir) !== "logs") return null;
  return {
    anchor: path.dirname(taskDir),
    rel: [path.basename(taskDir), "logs"],
    base: path.basename(p).slice(0, -2),
  };
}

interface Sink {
  write(b: Uint8Array): Promise<unknown>;
  close(): Promise<void>;
}

async function openSink(p: string, t: LogTargets): Promise<Sink> {
  const r = rotation(p);
  if (!r) return fs.open(p, "a");
  return RotatingWriter.open({
    ...r,
    maxFiles: t.maxFiles ?? DEFAULT_LOG_CONFIG.MaxFiles,
    maxFileBytes: t.maxFileBytes ?? DEFAULT_LOG_CONFIG.MaxFileSizeMB * 1024 * 1024,
  });
}

/**
 * Appends the frames of `stream` to the two logs (rotated, see LogTargets), dropping messages
 * timed at or before `afterNs`; resolves when the stream ends (or errors: the log is best effort,
 * the task's exit is not).
 */
export async function pumpLogs(stream: Readable, files: LogTargets, afterNs: bigint): Promise<void> {
  const out = await openSink(files.stdoutPath, files);
  const err = await openSink(files.stderrPath, files).catch(async (e: unknown) => {
    await out.close();
    throw e;
  });
  const parser = new FrameParser();
  try {
    for await (const chunk of stream) {
      for (const frame of parser.push(chunk as Buffer)) {
        const { ns, message } = splitTimestamp(frame.payload);
        if (ns !== null && ns <= afterNs) continue;
        await (frame.stream === 2 ? err : out).write(message);
      }
    }
  } catch {
    // The connection broke (daemon restart, agent detaching): what came is written.
  } finally {
    await out.close();
    await err.close();
  }
}
