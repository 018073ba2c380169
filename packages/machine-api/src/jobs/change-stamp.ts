/**
 * The database's change stamp: a value that moves whenever a row may have changed, committed by this
 * connection or by any other (another process: `machine-api keys revoke` while the server runs). A cache
 * keeps what it read under the stamp taken *before* the read, and uses it only while the stamp is still the
 * same (ARCHITECTURE.md, the cache invariant), so no kept answer outlives a change committed before a
 * request started. The same idea as forge's store/change-stamp.ts.
 *
 * SQLite: `PRAGMA data_version` (moves when another connection, in any process, commits) and
 * `total_changes()` (every row this connection changed). PostgreSQL: the server's current snapshot, which
 * every instance of a farm sees move (registerPostgresStamp).
 */

import type BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { SharedStampRead } from './shared-stamp-read.js';

/** How one database handle's stamp is read. */
export interface ChangeStampReader {
  /** The stamp read synchronously, or undefined when it cannot be (an open transaction; a server round trip). */
  now(): string | undefined;
  /** The stamp, read by a statement sent after this call. */
  read(): Promise<string>;
}

const readers = new WeakMap<Kysely<unknown>, ChangeStampReader>();

/** Registers the connection behind a SQLite handle (jobs/database.ts does, on opening it). */
export function registerSqliteStamp<DB>(db: Kysely<DB>, connection: BetterSqlite3.Database): void {
  // Two prepared statements read directly: `PRAGMA data_version` costs about a microsecond this way.
  const dataVersion = connection.prepare('PRAGMA data_version').pluck();
  const totalChanges = connection.prepare('SELECT total_changes()').pluck();
  const queued: CompiledQuery<{ stamp: string }> = sql<{ stamp: string }>`
    SELECT data_version || ':' || total_changes() AS stamp FROM pragma_data_version`.compile(db);
  readers.set(db as Kysely<unknown>, {
    // Inside a transaction this connection's own changes are not committed yet (they may roll back), so
    // the stamp is read only outside one; otherwise behind Kysely's queue, after the transaction ends.
    now: () => {
      if (connection.inTransaction) return undefined;
      return `${dataVersion.get() as number}:${totalChanges.get() as number}`;
    },
    read: async () => (await db.executeQuery(queued)).rows[0]?.stamp ?? '',
  });
}

/**
 * Registers a PostgreSQL handle: the server's current snapshot (`xmin:xmax:xip…`), as forge's stamp. Every
 * commit of a transaction that wrote, by any instance of the farm, changes it; equal snapshots mean no
 * commit in between, and a snapshot never comes back once it moved. A round trip, shared by concurrent
 * readers each of whom trusts only a query sent after it asked (shared-stamp-read.ts).
 */
export function registerPostgresStamp<DB>(db: Kysely<DB>): void {
  const query = sql<{ stamp: string }>`SELECT pg_current_snapshot()::text AS stamp`.compile(db);
  const shared = new SharedStampRead(async () => (await db.executeQuery(query)).rows[0]?.stamp ?? '');
  readers.set(db as Kysely<unknown>, { now: () => undefined, read: () => shared.read() });
}

/** The reader of `db`'s stamp; undefined for a handle nobody registered (then nothing may be cached). */
export function changeStampReader<DB>(db: Kysely<DB>): ChangeStampReader | undefined {
  return readers.get(db as Kysely<unknown>);
}
