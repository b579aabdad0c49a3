/**
 * Blocking-query support shared by every StateStore implementation: waiters registered against
 * what they read — whole tables, or single objects within a table (watch keys) — and woken after
 * each commit by what it touched. It is the idea of Nomad's memdb watch channels per radix node: a
 * commit costs O(tables and keys it touched + waiters it wakes), never O(all waiters), and a waiter
 * on node A's allocs sleeps through every alloc write on node B.
 *
 * Waiters are woken on the turn of the event loop after the commit's, all in that turn: the
 * writer's own continuation runs first.
 *
 * Contract with the stores: a commit reports every table it touched and, for the tables that have
 * keys (watch_keys.ts), the key of every object it put or deleted. A commit that touched a table but
 * named no key of it (a write path that records none) wakes every keyed waiter of that table, so a
 * forgotten key costs a spurious wake, never a missed one.
 */
import { abortError } from "../../internal/abort.js";
import type { Table } from "./store.js";
import type { WatchKey } from "./watch_keys.js";

/** The table a key names an object of (the text before its first `/`). */
export function tableOfKey(key: WatchKey): Table {
  return key.slice(0, key.indexOf("/")) as Table;
}

interface Waiter {
  tables: readonly Table[];
  keys: readonly WatchKey[];
  minIndex: number;
  wake: () => void;
}

/** Sets of waiters under a name; empty sets are dropped so the maps hold only what is waited on. */
class Registry<K> {
  private readonly sets = new Map<K, Set<Waiter>>();
  add(k: K, w: Waiter): void {
    let s = this.sets.get(k);
    if (!s) {
      s = new Set();
      this.sets.set(k, s);
    }
    s.add(w);
  }
  delete(k: K, w: Waiter): void {
    const s = this.sets.get(k);
    if (s?.delete(w) && s.size === 0) this.sets.delete(k);
  }
  get(k: K): ReadonlySet<Waiter> | undefined {
    return this.sets.get(k);
  }
  values(): IterableIterator<Set<Waiter>> {
    return this.sets.values();
  }
}

export class IndexWatch {
  /** Waiters on whole tables, by table. */
  private readonly byTable = new Registry<Table>();
  /** Waiters on objects, by key. */
  private readonly byKey = new Registry<WatchKey>();
  /** The same keyed waiters by the tables of their keys (for a commit that named no key). */
  private readonly keyedByTable = new Registry<Table>();
  private waiting = 0;

  constructor(
    private readonly tableIndex: (t: Table) => number,
    private readonly index: () => number,
  ) {}

  /** How many waiters are registered (diagnostics, tests). */
  get size(): number {
    return this.waiting;
  }

  /**
   * Resolves with the current index at once when one of `tables` is past `minIndex`; otherwise
   * when a commit touches one of `keys` (one of `tables` when `keys` is empty), or after
   * `timeoutMs`. Rejects with an AbortError when `signal` aborts.
   */
  wait(
    tables: readonly Table[],
    minIndex: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    keys: readonly WatchKey[] = [],
  ): Promise<number> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.passed(tables, minIndex)) return Promise.resolve(this.index());
    return new Promise<number>((resolve, reject) => {
      let settled = false;
      /** False when the waiter was already woken, timed out or aborted (a wake may come late). */
      const done = () => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.unregister(waiter);
        return true;
      };
      const waiter: Waiter = {
        tables,
        keys,
        minIndex,
        wake: () => {
          if (done()) resolve(this.index());
        },
      };
      const onAbort = () => {
        if (done()) reject(abortError(signal));
      };
      const timer = setTimeout(waiter.wake, Math.max(0, timeoutMs));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.register(waiter);
    });
  }

  /** Called after a commit that touched `touched`, naming the objects it put or deleted in `keys`. */
  notify(touched: ReadonlySet<Table>, keys: ReadonlySet<WatchKey> = new Set()): void {
    const woken = new Set<Waiter>();
    for (const t of touched) {
      for (const w of this.byTable.get(t) ?? []) if (this.passed(w.tables, w.minIndex)) woken.add(w);
    }
    const keyed = new Set<Table>();
    for (const k of keys) {
      keyed.add(tableOfKey(k));
      for (const w of this.byKey.get(k) ?? []) woken.add(w);
    }
    for (const t of touched) {
      if (!keyed.has(t)) for (const w of this.keyedByTable.get(t) ?? []) woken.add(w);
    }
    const index = this.index();
    const wake = [...woken].filter((w) => index > w.minIndex);
    if (wake.length === 0) return;
    // On the next turn of the loop, not inside the commit: the write that caused it is answered
    // first, instead of after every waiter it woke has built and sent its answer.
    setImmediate(() => {
      for (const w of wake) w.wake();
    });
  }

  /** Wakes every waiter (store closing). */
  wakeAll(): void {
    const all = new Set<Waiter>();
    for (const t of ["byTable", "keyedByTable"] as const) {
      for (const set of this[t].values()) for (const w of set) all.add(w);
    }
    for (const w of all) w.wake();
  }

  private register(w: Waiter): void {
    this.waiting++;
    if (w.keys.length === 0) {
      for (const t of w.tables) this.byTable.add(t, w);
      return;
    }
    for (const k of w.keys) {
      this.byKey.add(k, w);
      this.keyedByTable.add(tableOfKey(k), w);
    }
  }

  private unregister(w: Waiter): void {
    this.waiting--;
    if (w.keys.length === 0) {
      for (const t of w.tables) this.byTable.delete(t, w);
      return;
    }
    for (const k of w.keys) {
      this.byKey.delete(k, w);
      this.keyedByTable.delete(tableOfKey(k), w);
    }
  }

  private passed(tables: readonly Table[], minIndex: number): boolean {
    return tables.some((t) => this.tableIndex(t) > minIndex);
  }
}
