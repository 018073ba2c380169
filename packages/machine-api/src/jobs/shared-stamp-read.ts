/**
 * On PostgreSQL a change stamp is a round trip (the keys' generation, access/key-stamp.ts; the server's
 * snapshot, change-stamp.ts). Under load every key check sent a query of its own: a quarter of an
 * instance's CPU on `GET /machines` with a key (2 instances × 100 machines, bench/farm-view.ts). Here
 * concurrent readers share queries under one rule that keeps "a change committed before the request is
 * seen" true (a revoked key refused at its next request): a reader is only ever given the result of a
 * query SENT AFTER IT ASKED. A query already in flight may have read the stamp before a commit whose
 * answer the caller has already seen, so a reader arriving while one is in flight waits for the next
 * query, sent as soon as the current one settles, and every reader arriving meanwhile shares that one. At
 * most two queries are outstanding; a reader waits at most about two round trips. (forge's
 * cache/shared-stamp-read.ts follows the same rule: the two packages share no code.)
 */
export class SharedStampRead<T> {
  /** The query in flight, if any. */
  private inFlight: Promise<T> | null = null;
  /** The query that checks arriving during `inFlight` wait for; sent once `inFlight` settles. */
  private queued: Promise<T> | null = null;

  constructor(private readonly query: () => Promise<T>) {}

  read(): Promise<T> {
    const current = this.inFlight;
    if (current === null) return this.send();
    this.queued ??= current.then(
      () => this.sendQueued(),
      () => this.sendQueued(),
    );
    return this.queued;
  }

  private sendQueued(): Promise<T> {
    this.queued = null;
    return this.send();
  }

  private send(): Promise<T> {
    const query = this.query();
    this.inFlight = query;
    const settled = () => {
      if (this.inFlight === query) this.inFlight = null;
    };
    query.then(settled, settled);
    return query;
  }
}
