/**
 * A mutex per key: callers with the same key run one at a time in arrival order, callers with
 * different keys run in parallel. Used to keep at most one CSI call in flight per volume.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a holder or waiters; for tests and diagnostics. */
  get busyKeys(): string[] {
    return [...this.tails.keys()];
  }
}
