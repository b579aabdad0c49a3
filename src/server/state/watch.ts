/**
 * Blocking-query support shared by every StateStore implementation: waiters registered against
 * table indexes, woken after each commit.
 */
import { abortError } from "../../internal/abort.js";
import type { Table } from "./store.js";

interface Waiter {
  tables: readonly Table[];
  minIndex: number;
  wake: () => void;
}

export class IndexWatch {
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly tableIndex: (t: Table) => number,
    private readonly index: () => number,
  ) {}

  wait(
    tables: readonly Table[],
    minIndex: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<number> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.passed(tables, minIndex)) return Promise.resolve(this.index());
    return new Promise<number>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.waiters.delete(waiter);
      };
      const waiter: Waiter = {
        tables,
        minIndex,
        wake: () => {
          done();
          resolve(this.index());
        },
      };
      const onAbort = () => {
        done();
        reject(abortError(signal));
      };
      const timer = setTimeout(waiter.wake, Math.max(0, timeoutMs));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Called after a commit that touched `touched`. */
  notify(touched: ReadonlySet<Table>): void {
    for (const w of [...this.waiters]) {
      if (w.tables.some((t) => touched.has(t)) && this.passed(w.tables, w.minIndex)) w.wake();
    }
  }

  /** Wakes every waiter (store closing). */
  wakeAll(): void {
    for (const w of [...this.waiters]) w.wake();
  }

  private passed(tables: readonly Table[], minIndex: number): boolean {
    return tables.some((t) => this.tableIndex(t) > minIndex);
  }
}
