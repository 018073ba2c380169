/**
 * On PostgreSQL the keys' stamp is a round trip (key-stamp.ts). Under load every key check sent a query
 * of its own: a quarter of an instance's CPU on `GET /machines` with a key (2 instances × 100 machines,
 * bench/farm-view.ts). Here concurrent checks share queries under one rule that keeps "revoked at the next
 * request" true: a check is only ever given the result of a query SENT AFTER IT ASKED. A query already in
 * flight may have read the generation before a revocation whose answer the caller has already seen, so a
 * check arriving while one is in flight waits for the next query, sent as soon as the current one settles,
 * and every check arriving meanwhile shares that one. At most two queries are outstanding; a check waits
 * at most about two round trips. (forge's cache/shared-stamp-read.ts follows the same rule: the two
 * packages share no code.)
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
