import type BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * A SQLite database's change stamp: `PRAGMA data_version` (moves when another connection, in any
 * process, commits; not for this connection's own commits) and `total_changes()` (every row this
 * connection inserted, updated or deleted, rows changed by triggers and foreign key actions included).
 * Equal stamps on one connection mean no data changed in between. See cache/read-view.ts.
 */
const STAMP_SQL = "SELECT data_version || ':' || total_changes() AS stamp FROM pragma_data_version";

interface StampReader {
  /** The stamp read directly, or undefined while a transaction is open on the connection. */
  direct(): string | undefined;
  /** The same statement queued behind Kysely's other statements (after an open transaction ends). */
  queued: CompiledQuery<{ stamp: string }>;
  /** PostgreSQL: every read is a round trip (cache/stamp.ts shares them between concurrent readers). */
  roundTrip: boolean;
}

const readers = new WeakMap<Kysely<Database>, StampReader>();
/** Handles whose stamp can be read synchronously (SQLite), outside transactions. */
const directReaders = new WeakSet<Kysely<Database>>();

/** Registers the connection behind a SQLite Kysely handle (store/database.ts does, on opening). */
export function registerSqliteStamp(db: Kysely<Database>, connection: BetterSqlite3.Database): void {
  // Two statements instead of STAMP_SQL's one: `PRAGMA data_version` direct is cheaper than going through
  // the pragma_data_version table-valued function (about 1 µs of a ~60 µs cache hit), and
  // total_changes() reads no table. Nothing else runs on this connection between the two synchronous
  // calls, so the pair is the same value STAMP_SQL reads (same "data_version:total_changes" text).
  const dataVersion = connection.prepare('PRAGMA data_version').pluck();
  const totalChanges = connection.prepare('SELECT total_changes()').pluck();
  directReaders.add(db);
  readers.set(db, {
    // Outside a transaction every change this connection made is committed, so reading the stamp
    // directly (not queued behind Kysely's lock) cannot see a change that may still roll back.
    // Anything unexpected (e.g. the connection busy with an open iterator) takes the queued path.
    direct: () => {
      if (connection.inTransaction) return undefined;
      try {
        return `${dataVersion.get() as number}:${totalChanges.get() as number}`;
      } catch {
        return undefined;
      }
    },
    queued: sql<{ stamp: string }>`${sql.raw(STAMP_SQL)}`.compile(db),
    roundTrip: false,
  });
}

/**
 * PostgreSQL: the server's current snapshot (`xmin:xmax:xip…`). Every commit (or abort) of a transaction
 * that wrote changes it: a transaction listed as running leaves the list, and one that started after the
 * snapshot's xmax moves xmax past itself. Equal snapshots mean no commit in between, in any database of
 * the server (so other databases' traffic makes it move too). A snapshot never comes back once it moved
 * (xmax never decreases; new transactions start at or above it, so the list only loses entries below
 * it), so a stamp read earlier but answered later (concurrent round trips) is never taken for a newer one.
 */
export function registerPostgresStamp(db: Kysely<Database>): void {
  const queued = sql<{ stamp: string }>`SELECT pg_current_snapshot()::text AS stamp`.compile(db);
  readers.set(db, { direct: () => undefined, queued, roundTrip: true });
}

/** The change stamp of a handle opened by openDatabase; undefined for any other handle. */
export async function readChangeStamp(db: Kysely<Database>): Promise<string | undefined> {
  const reader = readers.get(db);
  if (!reader) return undefined;
  const stamp = reader.direct();
  if (stamp !== undefined) return stamp;
  const { rows } = await db.executeQuery(reader.queued);
  return rows[0]!.stamp;
}

/**
 * The change stamp read synchronously, when it can be (SQLite outside a transaction); undefined otherwise
 * (PostgreSQL, an open transaction, any other handle). Same value readChangeStamp reads.
 */
export function readChangeStampNow(db: Kysely<Database>): string | undefined {
  return readers.get(db)?.direct();
}

/** Whether readChangeStampNow can give `db`'s stamp (SQLite, outside a transaction). */
export function hasDirectChangeStamp(db: Kysely<Database>): boolean {
  return directReaders.has(db);
}

/** Whether every read of `db`'s stamp is a round trip to the server (PostgreSQL). */
export function isRoundTripChangeStamp(db: Kysely<Database>): boolean {
  return readers.get(db)?.roundTrip === true;
}

/** Whether `db` is a handle with a change stamp (opened by openDatabase). */
export function hasChangeStamp(db: Kysely<Database>): boolean {
  return readers.has(db);
}
