/**
 * One scheduling pass per job at a time, as Nomad's eval broker hands out one eval per job at a
 * time. Two passes of one job read the same allocs and plan the same slots: each one's writes make
 * the other's plan stale, so both fall back to planning inside their transactions again and again
 * (a 1,000-alloc job raced by its deployment watcher's passes spent most of its time so), and the
 * later one must see what the earlier one placed anyway.
 *
 * A request that arrives while an identical one (same job, trigger and options) is still waiting
 * for its turn shares that pass: the waiting pass will read the state after both requests, which is
 * all either asked for. A pass that has started is never shared, since it may have read the state
 * before the request's reason landed.
 */
import { KeyedMutex } from "../../internal/keyed_mutex.js";

export class JobPasses<R> {
  private readonly mutex = new KeyedMutex();
  private readonly waiting = new Map<string, Promise<R>>();

  /** Runs `pass` once every earlier pass of `job` has ended; `request` tells identical requests apart. */
  run(job: string, request: string, pass: () => Promise<R>): Promise<R> {
    const k = `${job}\u0000${request}`;
    const queued = this.waiting.get(k);
    if (queued) return queued;
    const p = this.mutex.run(job, () => {
      if (this.waiting.get(k) === p) this.waiting.delete(k);
      return pass();
    });
    this.waiting.set(k, p);
    return p;
  }

  /** Jobs with a pass running or waiting (for tests). */
  get busyJobs(): number {
    return this.mutex.size;
  }
}
