/**
 * One subscriber's stream: newline-delimited JSON on an HTTP response, as Nomad's
 * (nomad/stream/ndjson.go, command/agent/event_endpoint.go):
 *
 * - `{}` at once (the stream is open), then a `{}` heartbeat every `heartbeatMs` (Nomad: 30 s);
 * - one frame per index with at least one matching event: `{"Index":N,"Events":[…]}`, in index
 *   order, each index once;
 * - a slow reader never makes memory grow: frames are written only while the socket takes them
 *   (`write` returning false stops the pump until `drain`), so what waits for it is the shared
 *   buffer's items, nothing of its own. When the buffer drops an item it has not sent, it has
 *   fallen behind and its connection is closed (Nomad: "event dropped from buffer"), as it is
 *   when a write does not drain within `writeTimeoutMs` (Nomad's 40 s write deadline). It resumes
 *   with `?index=` of the last index it got, plus one.
 * - a token that expires ends the stream before the next frame (Nomad: ErrTokenExpired).
 */
import type { ServerResponse } from "node:http";
import type { Logger } from "../../internal/log.js";
import type { EventBuffer } from "./buffer.js";
import { matches, type Subscription } from "./topics.js";

export interface StreamTimings {
  /** Between `{}` heartbeats (Nomad: 30 s). */
  heartbeatMs: number;
  /** How long a blocked write may wait for the socket to drain before the stream is cut off. */
  writeTimeoutMs: number;
}

export const DEFAULT_STREAM_TIMINGS: StreamTimings = { heartbeatMs: 30_000, writeTimeoutMs: 40_000 };

export interface StreamOptions extends Subscription {
  /** The index asked for (`?index=`): frames from that index on. */
  index: number;
  /** Unix ms at which the caller's token expires; 0 never. */
  expiresAtMs: number;
  /** Throws when the caller's token no longer allows the stream (re-checked on ACL changes). */
  authorize: () => void;
}

export class EventStream {
  private cursor: number;
  private blocked = false;
  private closed = false;
  private readonly heartbeat: NodeJS.Timeout;
  private writeTimer: NodeJS.Timeout | undefined;
  readonly done: Promise<void>;

  constructor(
    private readonly res: ServerResponse,
    private readonly buffer: EventBuffer,
    private readonly opts: StreamOptions,
    private readonly timings: StreamTimings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.cursor = buffer.startSeq(opts.index);
    this.done = new Promise((resolve) => {
      res.once("close", () => {
        this.closed = true;
        clearInterval(this.heartbeat);
        clearTimeout(this.writeTimer);
        resolve();
      });
    });
    // A broken connection is the client's business: it ends the stream, never the server.
    res.on("error", (err) => this.log.debug("event stream connection failed", { error: err }));
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache" });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.beat(), timings.heartbeatMs);
    this.heartbeat.unref();
    this.write("{}\n");
    this.pump();
  }

  /** The broker appended an item (or several). */
  wake(): void {
    if (this.closed) return;
    if (this.cursor < this.buffer.firstSeq) {
      this.cutOff("fell behind: events it had not read were dropped from the event buffer");
      return;
    }
    this.pump();
  }

  /** An ACL policy or token changed: close the stream if its token no longer allows it. */
  recheck(): void {
    if (this.closed) return;
    try {
      this.opts.authorize();
    } catch {
      this.log.info("event stream closed: its token no longer allows it");
      this.end();
    }
  }

  /** The server stops. */
  close(): void {
    this.end();
  }

  /** Ends the response; nothing is written after it. */
  private end(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.writeTimer);
    this.res.end();
  }

  private pump(): void {
    while (!this.closed && !this.blocked && this.cursor < this.buffer.nextSeq) {
      if (this.cursor < this.buffer.firstSeq) {
        this.cutOff("fell behind: events it had not read were dropped from the event buffer");
        return;
      }
      if (!this.wants(this.buffer.topicsAt(this.cursor))) {
        this.cursor++;
        continue;
      }
      const item = this.buffer.at(this.cursor)!;
      this.cursor++;
      const mine = item.events.filter((e) => matches(this.opts, e));
      if (mine.length === 0) continue;
      if (this.opts.expiresAtMs > 0 && this.opts.expiresAtMs <= this.now()) {
        this.log.info("event stream closed: its token expired");
        this.end();
        return;
      }
      this.write(`{"Index":${item.index},"Events":[${mine.map((e) => e.json).join(",")}]}\n`);
    }
  }

  /** Whether an item of `topics` may hold an event for this stream (else it is not converted). */
  private wants(topics: ReadonlySet<string>): boolean {
    if (this.opts.topics.has("*")) return true;
    for (const t of topics) if (this.opts.topics.has(t)) return true;
    return false;
  }

  private beat(): void {
    // A blocked socket needs no heartbeat: the connection is busy, and the frame would only queue.
    if (!this.closed && !this.blocked) this.write("{}\n");
  }

  private write(chunk: string): void {
    if (this.res.write(chunk)) return;
    this.blocked = true;
    this.writeTimer = setTimeout(
      () => this.cutOff(`a write did not drain within ${this.timings.writeTimeoutMs} ms`),
      this.timings.writeTimeoutMs,
    );
    this.writeTimer.unref();
    this.res.once("drain", () => {
      clearTimeout(this.writeTimer);
      this.blocked = false;
      this.pump();
    });
  }

  /** Drops the connection at once: what is queued on it is freed, nothing more is sent. */
  private cutOff(reason: string): void {
    if (this.closed) return;
    this.log.warn("event stream cut off", { reason });
    this.closed = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.writeTimer);
    this.res.destroy();
  }
}
