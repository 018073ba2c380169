/**
 * The farm's one event stream, for instances sharing a PostgreSQL database: every instance writes its
 * events into the `events` table (one id sequence for the farm) and streams every instance's events, in
 * id order, from a copy of that table kept in memory (history.ts), so `GET /events` on any instance
 * carries the whole farm and a `Last-Event-ID` first seen on one instance resumes on another.
 *
 * Writing: published events wait in a bounded queue and go in as one transaction per burst. Fan-out:
 * the transaction ends with `pg_notify`, and every instance (this one too) holds one dedicated connection
 * that `LISTEN`s; a notification makes it read the rows after the last id it read. When that connection
 * drops, it reconnects with backoff and reads what it missed the same way.
 *
 * Ids commit in order. A sequence value is taken at insert but transactions commit in another order, so
 * a reader that saw id 11 could later see id 10 commit, and a client resuming from 11 would never get
 * it. Each write transaction therefore first takes a transaction-level advisory lock, held until its
 * commit, and numbers its events from the newest id + 1 under it: writes are serialised across the farm,
 * and a transaction commits (becomes visible) before the next one can number anything. Chosen over
 * reading only below a safe horizon because events are low-rate and batched (one short transaction per
 * burst, not per event), and because the ids it gives are consecutive: resumption stays arithmetic and a
 * gap can only mean events pruned before this instance read them (the copy then tells its subscribers
 * to reload).
 *
 * Bounds: the table is pruned by the same rule the copy keeps (history.ts: the newest `minEvents` or the
 * last `minAgeMs`, never more than `maxEvents`); at most MAX_PENDING events wait for a database that does
 * not answer (later ones are dropped, and logged); reads go in pages of READ_PAGE rows.
 */

import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { JobDatabase } from '../jobs/database.js';
import type { EventBus, EventFilter, EventSubscription, EventType, FarmEvent, NewEvent } from './events.js';
import { DEFAULT_HISTORY, EventHistory, type HistoryOptions } from './history.js';

/** The channel every instance listens on; the payload is the newest id written (informative only). */
const CHANNEL = 'machine_api_events';
/** Key of the transaction-level advisory lock that serialises event writes ("mapi" + 2). */
const WRITE_LOCK_KEY = 0x6d617069_02;
const MAX_PENDING = 10_000;
/** Events per insert: 7 parameters each stays far below PostgreSQL's 65 535 per statement. */
const WRITE_BATCH = 500;
const READ_PAGE = 1000;
/** Pruning is a range delete; once every PRUNE_EVERY_MS per instance is plenty. */
const PRUNE_EVERY_MS = 10_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
/** How long `settle` waits for a database that does not answer before the request goes on without. */
const SETTLE_LIMIT_MS = 2_000;
/** How long `close` waits for pending events to be written. */
const CLOSE_LIMIT_MS = 2_000;

export interface SharedEventOptions {
  db: Kysely<JobDatabase>;
  /** The database URL, for the dedicated `LISTEN` connection. */
  url: string;
  instance: string;
  logger: Logger;
  history?: HistoryOptions;
}

type Pending = Omit<FarmEvent, 'id'>;

export class SharedEventBus implements EventBus {
  private readonly history: HistoryOptions;
  /** Every retained event of the farm read so far; subscribers are served from it. */
  private readonly copy: EventHistory;
  private lastRead: number;
  private pending: Pending[] = [];
  /** Events ever queued here, and how many of them are written (or dropped): what `settle` waits for. */
  private queued = 0;
  private written = 0;
  /** Id of the newest event this instance wrote. */
  private newestWritten = 0;
  private dropped = 0;
  private writing: Promise<void> | null = null;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private lastPruneMs = 0;
  private listener: pg.Client | null = null;
  private retryMs = RETRY_MIN_MS;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  private constructor(
    private readonly options: SharedEventOptions,
    copy: EventHistory,
    lastRead: number,
  ) {
    this.history = options.history ?? DEFAULT_HISTORY;
    this.copy = copy;
    this.lastRead = lastRead;
  }

  /** Loads the retained history, then listens; the database must answer (it was just migrated). */
  static async open(options: SharedEventOptions): Promise<SharedEventBus> {
    const history = options.history ?? DEFAULT_HISTORY;
    const first = await firstRetainedId(options.db, history, Date.now());
    const copy = new EventHistory(options.instance, { ...history, seed: first === null ? null : first - 1 });
    const bus = new SharedEventBus(options, copy, first === null ? 0 : first - 1);
    await bus.read();
    await bus.listen();
    return bus;
  }

  get instance(): string {
    return this.options.instance;
  }

  get lastId(): number {
    return this.copy.lastId;
  }

  publish(event: NewEvent): void {
    if (this.closed) return;
    this.queued += 1;
    if (this.pending.length >= MAX_PENDING) {
      // Counted as written so that `settle` does not wait for it.
      this.written += 1;
      if (this.dropped++ % 1000 === 0) {
        this.options.logger.error(
          { dropped: this.dropped },
          `event history: ${MAX_PENDING} events wait for the database; dropping new ones`,
        );
      }
      return;
    }
    this.pending.push({ ...event, instance: this.options.instance, time: new Date().toISOString() });
    this.startWriting();
  }

  private startWriting(): void {
    this.writing ??= this.writePending().finally(() => {
      this.writing = null;
      // Published after the loop saw an empty queue but before this ran.
      if (this.pending.length > 0 && !this.closed) this.startWriting();
    });
  }

  subscribe(
    filter: EventFilter,
    after: number | null,
    deliver: (event: FarmEvent) => void,
  ): EventSubscription {
    return this.copy.subscribe(filter, after, deliver);
  }

  recent(filter: EventFilter, limit: number): FarmEvent[] {
    return this.copy.recent(filter, limit);
  }

  async settle(id?: number): Promise<void> {
    const target = this.queued;
    const known = Math.max(this.newestWritten, id ?? 0);
    if (target === this.written && known <= this.copy.lastId) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SETTLE_LIMIT_MS);
    });
    const settled = (async () => {
      while (this.written < target && this.writing) await this.writing;
      // A read that starts now sees every commit before it, this instance's and the others'.
      await this.read();
    })();
    try {
      await Promise.race([settled, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const writes = this.writing;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      writes,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_LIMIT_MS);
      }),
    ]);
    clearTimeout(timer);
    this.closed = true;
    for (const pending of this.timers) clearTimeout(pending);
    this.timers.clear();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
    await this.reading;
  }

  /** Writes the queue in batches until it is empty; retries with backoff while the database fails. */
  private async writePending(): Promise<void> {
    let retryMs = RETRY_MIN_MS;
    while (this.pending.length > 0 && !this.closed) {
      const batch = this.pending.slice(0, WRITE_BATCH);
      try {
        await this.insert(batch);
        this.pending.splice(0, batch.length);
        this.written += batch.length;
        retryMs = RETRY_MIN_MS;
      } catch (error) {
        this.options.logger.warn({ err: error }, 'event history: writing events failed; retrying');
        await this.sleep(retryMs);
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
      }
    }
  }

  private async insert(batch: readonly Pending[]): Promise<void> {
    const now = Date.now();
    const prune = now - this.lastPruneMs >= PRUNE_EVERY_MS;
    const last = await this.options.db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(${WRITE_LOCK_KEY})`.execute(tx);
      // An empty table starts from the clock in microseconds, as one instance alone does (history.ts).
      const newest = await sql<{ id: number }>`
        select coalesce(max(id), (extract(epoch from clock_timestamp()) * 1000000)::bigint) as id
        from events`.execute(tx);
      const first = Number(newest.rows[0]?.id) + 1;
      await tx
        .insertInto('events')
        .values(
          batch.map((event, index) => ({
            id: first + index,
            instance: event.instance,
            type: event.type,
            time: event.time,
            machine_id: event.machine_id,
            job_id: event.job_id,
            data: JSON.stringify(event.data),
          })),
        )
        .execute();
      const last = first + batch.length - 1;
      if (prune) await pruneBefore(tx, this.history, last, now);
      // Delivered to every listener when (and only if) the transaction commits.
      await sql`select pg_notify(${CHANNEL}, ${String(last)})`.execute(tx);
      return last;
    });
    this.newestWritten = last;
    if (prune) this.lastPruneMs = now;
  }

  /** Reads every row after the last one read; a call during a read makes that read go round once more. */
  private read(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        await this.readPages();
      } while (this.readAgain && !this.closed);
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readPages(): Promise<void> {
    try {
      for (;;) {
        const rows = await this.options.db
          .selectFrom('events')
          .selectAll()
          .where('id', '>', this.lastRead)
          .orderBy('id')
          .limit(READ_PAGE)
          .execute();
        for (const row of rows) {
          this.lastRead = row.id;
          this.copy.append({
            id: row.id,
            type: row.type as EventType,
            instance: row.instance,
            time: row.time,
            machine_id: row.machine_id,
            job_id: row.job_id,
            data: JSON.parse(row.data) as Record<string, unknown>,
          });
        }
        if (rows.length < READ_PAGE || this.closed) return;
      }
    } catch (error) {
      if (this.closed) return;
      // The next notification, or the listener's reconnection, reads again from the same id.
      this.options.logger.warn({ err: error }, 'event history: reading events failed');
      this.after(RETRY_MAX_MS, () => void this.read());
    }
  }

  /** Opens the `LISTEN` connection; on failure or once it drops, again after a growing delay. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      connectionTimeoutMillis: 10_000,
      // Named, so that an operator (or a test) can tell each instance's listening connection apart.
      application_name: `machine-api events ${this.options.instance}`.slice(0, 63),
    });
    const lost = (error?: Error) => {
      if (this.listener !== client) return;
      this.listener = null;
      void client.end().catch(() => {});
      if (this.closed) return;
      this.options.logger.warn(
        { err: error },
        `event history: the listening connection to the database dropped; reconnecting in ${this.retryMs} ms`,
      );
      this.after(this.retryMs, () => void this.listen());
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    };
    this.listener = client;
    client.on('notification', () => void this.read());
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      lost(error as Error);
      return;
    }
    this.retryMs = RETRY_MIN_MS;
    // What was committed while no connection listened.
    await this.read();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }
}

/**
 * The oldest id the retention rule keeps (null: no event yet): the newest `minEvents`, or those younger
 * than `minAgeMs`, within the newest `maxEvents` (the same rule as `pruneBefore`).
 */
async function firstRetainedId(
  db: Kysely<JobDatabase>,
  history: HistoryOptions,
  now: number,
): Promise<number | null> {
  const newest = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  if (newest?.id === null || newest?.id === undefined) return null;
  const last = Number(newest.id);
  const cutoff = new Date(now - history.minAgeMs).toISOString();
  const oldest = await db
    .selectFrom('events')
    .select((eb) => eb.fn.min('id').as('id'))
    .where('id', '>', last - history.maxEvents)
    .where((eb) => eb.or([eb('id', '>', last - history.minEvents), eb('time', '>=', cutoff)]))
    .executeTakeFirst();
  return Number(oldest?.id ?? last);
}

/** Deletes what the retention rule lets go, the newest id being `last` (inside the write transaction). */
async function pruneBefore(
  tx: Kysely<JobDatabase>,
  history: HistoryOptions,
  last: number,
  now: number,
): Promise<void> {
  const cutoff = new Date(now - history.minAgeMs).toISOString();
  await tx
    .deleteFrom('events')
    .where('id', '<=', last - history.minEvents)
    .where((eb) => eb.or([eb('time', '<', cutoff), eb('id', '<=', last - history.maxEvents)]))
    .execute();
}
