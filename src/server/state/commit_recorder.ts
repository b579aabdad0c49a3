/**
 * The commit feed's two halves for a store (commit_feed.ts states the contract):
 *
 * - TxnChanges: one txn's changes as its writer makes them, record by record. A record written
 *   several times in one txn is kept once, as it was left, with `before` as it was when the txn
 *   began; one the txn created and then deleted is nothing at all. A put hands over the record's
 *   JSON (the writer has just serialised it for its own storage, or does so only while someone
 *   listens), so a listener gets a fresh copy, parsed once, the first time it reads `record`.
 * - CommitListeners: the listeners, and the delivery of a committed txn to each of them, in the
 *   order they subscribed; one that throws is logged and the others still get the txn.
 *
 * A store records changes only while `listening` is true, so with no listener a write pays one
 * boolean check and nothing else.
 */
import type { Logger } from "../../internal/log.js";
import type { CommitListener, CommittedChange, CommittedTxn } from "./commit_feed.js";
import type { Table } from "./store.js";

interface Pending {
  table: Table;
  namespace: string;
  id: string;
  op: "put" | "delete";
  /** The record's JSON after a put. */
  json?: string;
  /** The record before the txn; `existed` false when the txn created it. */
  before?: unknown;
  /** Or, instead, its stored JSON, parsed on first read of the change's `before`. */
  beforeJson?: string;
  existed: boolean;
}

export class TxnChanges {
  private readonly byKey = new Map<string, Pending>();

  /** `before` is the record as the writer read it before this write (undefined when new). */
  put(table: Table, namespace: string, id: string, json: string, before: unknown): void {
    this.putPending(table, namespace, id, json, { before, existed: before !== undefined });
  }

  /**
   * put, for a writer that holds the record before this write only as its stored JSON (which it
   * has not parsed): it is parsed when a listener first reads `before`, which most never do.
   */
  putOverText(table: Table, namespace: string, id: string, json: string, beforeJson: string): void {
    this.putPending(table, namespace, id, json, { beforeJson, existed: true });
  }

  private putPending(
    table: Table,
    namespace: string,
    id: string,
    json: string,
    was: Pick<Pending, "before" | "beforeJson" | "existed">,
  ): void {
    const key = keyOf(table, namespace, id);
    const seen = this.byKey.get(key);
    if (seen) {
      seen.op = "put";
      seen.json = json;
      return;
    }
    this.byKey.set(key, { table, namespace, id, op: "put", json, ...was });
  }

  /** `before` is the record as it was until this delete. */
  delete(table: Table, namespace: string, id: string, before: unknown): void {
    const key = keyOf(table, namespace, id);
    const seen = this.byKey.get(key);
    if (seen) {
      if (!seen.existed) {
        // Created and deleted within the txn: nothing changed.
        this.byKey.delete(key);
        return;
      }
      seen.op = "delete";
      delete seen.json;
      return;
    }
    this.byKey.set(key, { table, namespace, id, op: "delete", before, existed: true });
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The txn as the feed delivers it, at `index`; undefined when it changed nothing. */
  committed(index: number): CommittedTxn | undefined {
    if (this.byKey.size === 0) return undefined;
    const changes: CommittedChange[] = [];
    for (const p of this.byKey.values()) changes.push(changeOf(p));
    return { index, changes };
  }
}

function keyOf(table: Table, namespace: string, id: string): string {
  return `${table}\u0000${namespace}\u0000${id}`;
}

/** `record` (and a `before` held as JSON) is parsed on first read (most listeners skip most tables). */
function changeOf(p: Pending): CommittedChange {
  const change: CommittedChange = { table: p.table, namespace: p.namespace, id: p.id, op: p.op };
  if (p.existed) {
    if (p.beforeJson !== undefined) parsedOnRead(change, "before", p.beforeJson);
    else change.before = p.before;
  }
  if (p.op === "put" && p.json !== undefined) parsedOnRead(change, "record", p.json);
  return change;
}

function parsedOnRead(change: CommittedChange, field: "record" | "before", json: string): void {
  let parsed: unknown;
  Object.defineProperty(change, field, {
    enumerable: true,
    get: () => (parsed ??= JSON.parse(json) as unknown),
  });
}

export class CommitListeners {
  private readonly listeners: CommitListener[] = [];

  constructor(private readonly log: Logger) {}

  /** Whether anyone listens: a store records changes only then. */
  get listening(): boolean {
    return this.listeners.length > 0;
  }

  add(listener: CommitListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  deliver(txn: CommittedTxn): void {
    for (const l of [...this.listeners]) {
      try {
        l(txn);
      } catch (err) {
        this.log.error("a commit listener failed; skipped", { index: txn.index, error: err });
      }
    }
  }
}
