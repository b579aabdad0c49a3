/**
 * The event buffer: the last `size` committed txns that made events, one item per index, as
 * Nomad's eventBuffer (nomad/stream/event_buffer.go; `event_buffer_size`, default 100). Older items
 * are dropped; a subscriber that still needed one has fallen behind and is cut off (stream.ts).
 *
 * Items are numbered by a sequence of their own (seq), so a subscriber's position survives drops:
 * it is behind when its next seq is below `firstSeq`. An item keeps the feed's txn until the first
 * subscriber reads it, and only then converts it to events (convert.ts), once for all: with no one
 * streaming, a commit costs the buffer a push and nothing more.
 */
import type { CommittedTxn } from "../state/commit_feed.js";
import { eventsOf, topicsOf, type EncodedEvent } from "./convert.js";

/** Nomad's default `event_buffer_size`. */
export const DEFAULT_EVENT_BUFFER_SIZE = 100;

interface Item {
  index: number;
  /** The topics its events can be in (convert.ts topicsOf). */
  topics: ReadonlySet<string>;
  txn: CommittedTxn | undefined;
  events: EncodedEvent[] | undefined;
}

export class EventBuffer {
  private items: Item[] = [];
  /** The seq of items[0]. */
  private first = 0;

  constructor(readonly size: number = DEFAULT_EVENT_BUFFER_SIZE) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`event buffer size must be ≥ 1, got ${size}`);
  }

  /** Keeps the txn when it makes events; returns whether it did. */
  append(txn: CommittedTxn): boolean {
    const topics = topicsOf(txn);
    if (topics.size === 0) return false;
    this.items.push({ index: txn.index, topics, txn, events: undefined });
    const excess = this.items.length - this.size;
    if (excess > 0) {
      this.items.splice(0, excess);
      this.first += excess;
    }
    return true;
  }

  /** The seq of the oldest item held. */
  get firstSeq(): number {
    return this.first;
  }

  /** The seq the next appended item will take. */
  get nextSeq(): number {
    return this.first + this.items.length;
  }

  get length(): number {
    return this.items.length;
  }

  /** The index of the newest item (0 when empty). */
  get lastIndex(): number {
    return this.items.at(-1)?.index ?? 0;
  }

  /**
   * Where a subscriber asking for `index` starts, as Nomad's: at the item of that index, else the
   * first after it; `index` 0, or one older than the buffer, starts at the oldest item held.
   */
  startSeq(index: number): number {
    if (index <= 0) return this.first;
    // Items are in index order: binary search for the first with index ≥ `index`.
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.index < index) lo = mid + 1;
      else hi = mid;
    }
    return this.first + lo;
  }

  /** The topics of the item at `seq` (empty when not held): read before `at` converts it. */
  topicsAt(seq: number): ReadonlySet<string> {
    return this.items[seq - this.first]?.topics ?? new Set();
  }

  /** The item at `seq`, its events converted on first read; undefined when not held. */
  at(seq: number): { index: number; events: EncodedEvent[] } | undefined {
    const item = this.items[seq - this.first];
    if (!item) return undefined;
    if (item.events === undefined) {
      item.events = eventsOf(item.txn!);
      item.txn = undefined;
    }
    return { index: item.index, events: item.events };
  }
}
