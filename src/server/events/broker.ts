/**
 * The event broker, as Nomad's EventBroker (nomad/stream/event_broker.go): it follows the state
 * store's commit feed from the server's start, keeps the txns that make events in the bounded
 * buffer (buffer.ts), and wakes every open stream (stream.ts) after each one, in index order.
 * A txn that changes an ACL policy or token makes every stream check its token again (acl.ts), so
 * one whose token lost the right, was deleted or expired is closed, as Nomad does.
 */
import type { ServerResponse } from "node:http";
import type { Logger } from "../../internal/log.js";
import type { CommittedTxn } from "../state/commit_feed.js";
import type { StateStore } from "../state/store.js";
import { DEFAULT_EVENT_BUFFER_SIZE, EventBuffer } from "./buffer.js";
import { DEFAULT_STREAM_TIMINGS, EventStream, type StreamOptions, type StreamTimings } from "./stream.js";
import { withDefaults } from "../../internal/with_defaults.js";

export interface EventBrokerOptions extends StreamTimings {
  /** How many indexes' events are kept for subscribers to resume from (`event_buffer_size`). */
  bufferSize: number;
}

export const DEFAULT_EVENT_BROKER: EventBrokerOptions = {
  bufferSize: DEFAULT_EVENT_BUFFER_SIZE,
  ...DEFAULT_STREAM_TIMINGS,
};

export class EventBroker {
  private readonly buffer: EventBuffer;
  private readonly streams = new Set<EventStream>();
  private readonly opts: EventBrokerOptions;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly log: Logger,
    opts: Partial<EventBrokerOptions> = {},
  ) {
    this.opts = withDefaults(DEFAULT_EVENT_BROKER, opts);
    this.buffer = new EventBuffer(this.opts.bufferSize);
  }

  /** Follows the store from now on: call before the server takes any write. */
  start(): void {
    this.unsubscribe ??= this.store.onCommit((txn) => this.publish(txn));
  }

  /** Stops following the store and ends every open stream. */
  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const s of this.streams) s.close();
  }

  /** Open streams (tests, diagnostics). */
  get subscribers(): number {
    return this.streams.size;
  }

  /** Items held in the buffer (tests, diagnostics). */
  get buffered(): number {
    return this.buffer.length;
  }

  /**
   * Streams matching events on `res` from `opts.index` until the client goes away, the stream is
   * cut off, or the broker stops; resolves then.
   */
  async stream(res: ServerResponse, opts: StreamOptions): Promise<void> {
    const s = new EventStream(res, this.buffer, opts, this.opts, this.log);
    this.streams.add(s);
    try {
      await s.done;
    } finally {
      this.streams.delete(s);
    }
  }

  private publish(txn: CommittedTxn): void {
    const aclChanged = txn.changes.some((c) => c.table === "acl_policies" || c.table === "acl_tokens");
    if (this.buffer.append(txn)) {
      for (const s of this.streams) s.wake();
    }
    if (aclChanged) for (const s of this.streams) s.recheck();
  }
}
