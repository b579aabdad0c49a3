/**
 * The loop of a server component that follows tables of the store (the deployment watcher, the
 * node drainer): run a pass; then wait until one of `tables` moves past the index seen before the
 * pass (so a write during the pass is never missed), or until the wake-up time the pass answered,
 * whichever comes first, never longer than `maxWaitMs`; then `settleMs` more, so a burst of writes
 * is one pass, not one each. A pass that throws is logged and the next one runs after
 * `errorBackoffMs`; so is a failed wait. The loop ends when `signal` aborts.
 */
import { isAbortError, sleep } from "../internal/abort.js";
import type { Logger } from "../internal/log.js";
import type { StateStore, Table } from "./state/store.js";

export interface FollowTablesOptions {
  store: StateStore;
  tables: readonly Table[];
  /** Runs once per wake; answers when it next wants to run regardless of writes (unix ms), or null. */
  pass: (signal: AbortSignal) => Promise<number | null>;
  /** Names the component in its log lines ("deployment watcher" → "deployment watcher pass failed"). */
  name: string;
  log: Logger;
  settleMs: number;
  errorBackoffMs: number;
  maxWaitMs: number;
}

export async function followTables(o: FollowTablesOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const seen = Math.max(...o.tables.map((t) => o.store.tableIndex(t)));
    let wakeAt: number | null = null;
    let failed = false;
    try {
      wakeAt = await o.pass(signal);
    } catch (err) {
      failed = true;
      o.log.error(`${o.name} pass failed`, { error: err });
    }
    try {
      if (failed) {
        await sleep(o.errorBackoffMs, signal);
        continue;
      }
      const wait = wakeAt === null ? o.maxWaitMs : Math.min(Math.max(0, wakeAt - Date.now()), o.maxWaitMs);
      await o.store.waitFor(o.tables, seen, signal, wait);
      await sleep(o.settleMs, signal);
    } catch (err) {
      if (!isAbortError(err)) o.log.error(`${o.name} wait failed`, { error: err });
      if (!signal.aborted) await sleep(o.errorBackoffMs, signal).catch(() => undefined);
    }
  }
}
