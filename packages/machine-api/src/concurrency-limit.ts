/** A counting semaphore: at most `limit` tasks run at once, the others wait in arrival order. */

export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`concurrency limit must be ≥ 1, got ${limit}`);
  }

  /** Tasks running now and tasks waiting for a slot. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Changes the limit; waiting tasks start at once if the new limit allows. */
  setLimit(limit: number): void {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`concurrency limit must be ≥ 1, got ${limit}`);
    this.limit = limit;
    this.wakeWaiting();
  }

  /** Runs `task` once a slot is free; an abort while waiting rejects with the signal's reason. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.running--;
      this.wakeWaiting();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiting.indexOf(start);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      const start = () => {
        signal?.removeEventListener('abort', onAbort);
        this.running++;
        resolve();
      };
      this.waiting.push(start);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wakeWaiting(): void {
    while (this.running < this.limit && this.waiting.length > 0) this.waiting.shift()?.();
  }
}
