/**
 * Group commit: the write transactions asked for within one turn of the event loop share ONE
 * durable commit (one fsync), instead of paying one each.
 *
 * Contract (what a caller of `submit` can rely on):
 * - Ops run in the order they were submitted, each exactly once, one after another, inside the
 *   host's single transaction; each op is isolated by the host (a savepoint), so an op that throws
 *   undoes only its own writes and rejects only its own promise.
 * - A promise settles only after its batch's COMMIT has returned, i.e. once the batch is durable
 *   (fulfilled), or once the batch as a whole has failed and was rolled back (rejected: nothing of
 *   any op in it was written). No op's result is ever seen by its caller before its data is on disk.
 * - `committed()` (notifications) runs once per committed batch, before any of its promises settle.
 * - A batch is bounded: it takes at most `maxBatch` ops, and stops taking more once it has run for
 *   `maxBatchMs`; the rest wait for the next flush, after the event loop has had a turn (I/O, timers),
 *   so a burst of writes neither delays one write without bound nor starves the loop.
 *
 * The batch is formed by deferring the flush with setImmediate: everything the poll phase delivered
 * (every request that arrived while the previous flush held the loop for its fsync) is in the queue
 * by then. better-sqlite3 is synchronous, so a flush runs to its COMMIT without yielding; an op
 * submitted while one runs (from inside an op) joins the batch in progress, after the others.
 */
import type { GroupCommitStats } from "../store.js";

export interface GroupCommitLimits {
  /** Most ops one batch takes (≥ 1; 1 turns grouping off: one commit per op, still deferred). */
  maxBatch: number;
  /** A batch takes no further op once it has run this long (ms); it always takes its first. */
  maxBatchMs: number;
}

/**
 * 10 ms: a batch's txns, its COMMIT and the continuations of its callers (run right after it, in
 * the same turn) hold the loop together; at 20 ms that turn reached 40–68 ms while 1,000 nodes
 * started their allocs (bench/scale_placement.ts), at 10 ms 35–49 ms. Claim throughput at 64 in
 * parallel did not move (bench/claims.ts): a batch rarely runs that long on claims alone.
 */
export const DEFAULT_GROUP_COMMIT: GroupCommitLimits = { maxBatch: 256, maxBatchMs: 10 };

/** What the store provides: one transaction around a batch, and isolation for each op in it. */
export interface GroupCommitHost<W> {
  /**
   * Runs `body` inside one transaction and commits it durably before returning. Throws when the
   * batch cannot commit; then nothing of it is written (the host has rolled it back).
   */
  transaction(body: () => void): void;
  /**
   * Runs one op inside the open transaction, isolated: when it throws, its writes are undone and
   * the error is rethrown. Throws a BatchLostError instead when the failure took the whole
   * transaction down with it (SQLite rolls back by itself on some I/O errors).
   */
  isolated<T>(fn: (w: W) => T): T;
  /** After a batch's COMMIT, before its promises settle (e.g. wake blocking queries). */
  committed(): void;
  /** After a batch failed as a whole: forget whatever the batch's ops changed in memory. */
  rolledBack(): void;
}

/** The transaction itself is gone; the batch cannot go on. */
export class BatchLostError extends Error {
  constructor(cause: unknown) {
    super(`the transaction was rolled back: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "BatchLostError";
  }
}

interface Op<W> {
  fn: (w: W) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

type Outcome<W> = { op: Op<W>; ok: true; value: unknown } | { op: Op<W>; ok: false; error: Error };

export class GroupCommit<W> {
  private queue: Op<W>[] = [];
  private head = 0;
  private scheduled: NodeJS.Immediate | undefined;
  private flushing = false;
  private readonly counters: GroupCommitStats = { batches: 0, ops: 0, largestBatch: 0 };

  constructor(
    private readonly host: GroupCommitHost<W>,
    private readonly limits: GroupCommitLimits = DEFAULT_GROUP_COMMIT,
    private readonly clock: () => number = () => performance.now(),
  ) {
    if (!Number.isInteger(limits.maxBatch) || limits.maxBatch < 1) {
      throw new Error(`group commit maxBatch must be an integer ≥ 1, got ${limits.maxBatch}`);
    }
    if (!(limits.maxBatchMs >= 0)) {
      throw new Error(`group commit maxBatchMs must be ≥ 0, got ${limits.maxBatchMs}`);
    }
  }

  submit<T>(fn: (w: W) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  stats(): GroupCommitStats {
    return { ...this.counters };
  }

  /** Runs every queued op now, batch after batch (the store is closing). */
  drain(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    while (this.pending() > 0) this.flushOne();
  }

  private pending(): number {
    return this.queue.length - this.head;
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.flushOne();
      if (this.pending() > 0) this.schedule();
    });
  }

  /** One batch: run, commit, then settle. */
  private flushOne(): void {
    const outcomes: Outcome<W>[] = [];
    const start = this.clock();
    this.flushing = true;
    let failure: Error | undefined;
    try {
      this.host.transaction(() => {
        while (this.pending() > 0 && outcomes.length < this.limits.maxBatch) {
          if (outcomes.length > 0 && this.clock() - start >= this.limits.maxBatchMs) break;
          const op = this.take();
          try {
            outcomes.push({ op, ok: true, value: this.host.isolated(op.fn) });
          } catch (err) {
            if (err instanceof BatchLostError) {
              outcomes.push({ op, ok: false, error: err });
              throw err;
            }
            outcomes.push({ op, ok: false, error: asError(err) });
          }
        }
      });
    } catch (err) {
      failure = asError(err);
    } finally {
      this.flushing = false;
    }
    if (failure) {
      this.host.rolledBack();
      // Nothing of the batch was written: every op fails, an op that threw with its own error.
      for (const o of outcomes) o.op.reject(o.ok ? failure : o.error);
      // A transaction that failed before running any op (it could not begin: a closed database)
      // fails the ops it would have run, so the queue moves on instead of retrying them forever.
      if (outcomes.length === 0) {
        for (let n = 0; n < this.limits.maxBatch && this.pending() > 0; n++) this.take().reject(failure);
      }
      return;
    }
    this.counters.batches++;
    this.counters.ops += outcomes.length;
    this.counters.largestBatch = Math.max(this.counters.largestBatch, outcomes.length);
    try {
      this.host.committed();
    } finally {
      for (const o of outcomes) {
        if (o.ok) o.op.resolve(o.value);
        else o.op.reject(o.error);
      }
    }
  }

  private take(): Op<W> {
    const op = this.queue[this.head]!;
    this.head++;
    // Drop the consumed prefix now and then, so the queue never grows with history.
    if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return op;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
