/**
 * PostgreSQL's change stamp is a round trip (store/change-stamp.ts). Under load every kept-answer hit
 * read it with a query of its own, and that query was ~45 of the ~75 µs of forge CPU a hit cost. Here
 * concurrent readers share queries, with one rule that keeps the stamp safe to trust: a reader is only
 * ever given the result of a query *sent after it asked*. A query already in flight may have taken its
 * snapshot before a commit whose answer the reader's client has already seen (a write it just made);
 * trusting that older stamp could serve an answer the write changed. So a reader arriving while a query
 * is in flight waits for the next one, sent as soon as the current one settles, and every reader
 * arriving meanwhile shares that next query. At most two queries are outstanding; a reader waits at most
 * about two round trips.
 */
export class SharedStampRead<T> {
  /** The query in flight, if any. */
  private sent: Promise<T> | null = null;
  /** The query the readers who arrived while `sent` was in flight wait for; not sent yet. */
  private next: Promise<T> | null = null;

  constructor(private readonly query: () => Promise<T>) {}

  read(): Promise<T> {
    const inFlight = this.sent;
    if (inFlight === null) return this.send();
    if (this.next === null) {
      const settled = () => {
        this.next = null;
        return this.send();
      };
      this.next = inFlight.then(settled, settled);
    }
    return this.next;
  }

  private send(): Promise<T> {
    const query = this.query();
    this.sent = query;
    const done = () => {
      if (this.sent === query) this.sent = null;
    };
    query.then(done, done);
    return query;
  }
}
