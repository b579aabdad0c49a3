/**
 * What a committed transaction changed, record by record: the feed the event stream
 * (server/events) and anything else that follows the store's writes reads. Every StateStore
 * implementation offers it as `onCommit(listener)`:
 *
 * Contract:
 * - After a txn's writes are durable, and before its caller's promise settles, each listener is
 *   called once with the txn's index and its changes, in the order the txn made them (a record put
 *   twice in one txn appears once, as it was left). Txns are delivered in index order, never twice,
 *   never skipped; a txn that wrote nothing is not delivered.
 * - A store that follows another writer (the etcd store's watch-fed replica) delivers the txns it
 *   applies from others the same way, at their indexes, so every server sees every change.
 * - `record` is a fresh copy of what was put (absent on delete); `before` is a fresh copy of the
 *   record as it was before the txn (absent when new). Listeners may keep them; they must not
 *   throw (a throwing listener is logged and skipped) and must not write to the store.
 * - An alloc's `record` may come without its Job (the SQLite store keeps allocs apart from their
 *   job copies, engine/alloc_jobs.ts, and hands over the alloc's JSON as stored); an alloc's Job in
 *   `before` is shared and read-only. Listeners must not rely on the one nor change the other.
 * - Derived records (plugins) are included as the store derived them. Secrets are in records as
 *   stored: a listener that shows records to users redacts them (structs/redact.ts).
 */
import type { Table } from "./tables.js";

export interface CommittedChange {
  table: Table;
  /** The record's namespace for namespaced tables (jobs, volumes, allocs, evals, deployments, intents, versions), "" otherwise. */
  namespace: string;
  /** The record's key within its table (ID; name for namespaces and ACL policies). */
  id: string;
  op: "put" | "delete";
  record?: unknown;
  before?: unknown;
}

export interface CommittedTxn {
  index: number;
  changes: CommittedChange[];
}

export type CommitListener = (txn: CommittedTxn) => void;
