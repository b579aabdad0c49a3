/**
 * The scheduler's blocked jobs, each with what it waits for (blocked_wait.ts), and the wakes that
 * came for them: `wake` queues a write's wakes, `takeDue` hands out the jobs the queued wakes may
 * unblock (once per look, so a burst of triggers costs one look), and `missed` answers whether a
 * wake that came after a pass read the state matches the wait that pass found (the lost wake-up
 * guard, scheduler.ts `track`).
 *
 * The recent wakes are kept in a bounded log: a pass whose read is older than the log reaches is
 * treated as having missed a wake (an extra pass, never a lost one).
 */
import { wakes, type BlockedWait, type Wake } from "./blocked_wait.js";

/** How many recent wakes the lost wake-up guard can look back through. */
const RECENT_WAKES = 1024;

export interface JobRef {
  namespace: string;
  id: string;
}

export class BlockedSet {
  private readonly jobs = new Map<string, JobRef & { wait: BlockedWait }>();
  /** Wakes queued since the last look. */
  private pending: Wake[] = [];
  /** The last RECENT_WAKES wakes, each with the store index it came at. */
  private readonly recent: { index: number; wake: Wake }[] = [];
  /** The highest index of a wake dropped from `recent` (0: none dropped). */
  private forgotten = 0;

  get size(): number {
    return this.jobs.size;
  }

  has(k: string): boolean {
    return this.jobs.has(k);
  }

  set(k: string, job: JobRef, wait: BlockedWait): void {
    this.jobs.set(k, { ...job, wait });
  }

  delete(k: string): void {
    this.jobs.delete(k);
  }

  /** Forgets the jobs and the queued wakes (a term ends); the recent log stays (indexes only grow). */
  clear(): void {
    this.jobs.clear();
    this.pending = [];
  }

  /** Queues the wakes of a write that came at store index `index`. */
  wake(index: number, ws: readonly Wake[]): void {
    for (const w of ws) {
      this.pending.push(w);
      this.recent.push({ index, wake: w });
    }
    const over = this.recent.length - RECENT_WAKES;
    if (over > 0) {
      for (const r of this.recent.splice(0, over)) this.forgotten = Math.max(this.forgotten, r.index);
    }
  }

  /** Whether any wake is queued. */
  get waking(): boolean {
    return this.pending.length > 0;
  }

  /**
   * The blocked jobs the queued wakes may unblock, and whether a node may have changed (system jobs
   * then run too); empties the queue.
   */
  takeDue(): { due: [string, JobRef][]; nodeChanged: boolean } {
    const ws = this.pending;
    this.pending = [];
    if (ws.length === 0) return { due: [], nodeChanged: false };
    const due: [string, JobRef][] = [];
    for (const [k, j] of this.jobs) {
      if (ws.some((w) => wakes(j.wait, w))) due.push([k, { namespace: j.namespace, id: j.id }]);
    }
    return { due, nodeChanged: ws.some((w) => w.Kind !== "volume") };
  }

  /** Whether a wake that came after index `readAt` matches `wait` (or the log no longer reaches). */
  missed(readAt: number, wait: BlockedWait): boolean {
    if (this.forgotten > readAt) return true;
    for (let i = this.recent.length - 1; i >= 0; i--) {
      const r = this.recent[i]!;
      if (r.index <= readAt) break;
      if (wakes(wait, r.wake)) return true;
    }
    return false;
  }
}
