import type BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * A database's change stamp, in two grains. Equal stamps on one connection mean no data (of that grain)
 * changed in between; a stamp never comes back once it moved. See cache/read-view.ts.
 */
export interface ChangeStamp {
  /** Moves with every committed change. */
  all: string;
  /**
   * Moves with every committed change to users, access tokens and tokens' repository lists: the account
   * generation (migration 016, bumped by triggers in the writing transaction). When its row is missing
   * (an operator deleted it) this is `all`, so nothing kept under it can outlive a change.
   */
  accounts: string;
}

/** The account generation: on PostgreSQL in the stamp's statement (one snapshot), on SQLite right after it. */
const ACCOUNTS_SQL = '(SELECT generation FROM account_generation WHERE id = 1)';

/**
 * SQLite: `PRAGMA data_version` (moves when another connection, in any process, commits; not for this
 * connection's own commits) and `total_changes()` (every row this connection inserted, updated or
 * deleted, rows changed by triggers and foreign key actions included), and the account generation.
 */
const STAMP_SQL = `SELECT data_version || ':' || total_changes() AS stamp, ${ACCOUNTS_SQL} AS accounts FROM pragma_data_version`;

function stampOf(all: string, accounts: unknown): ChangeStamp {
  return { all, accounts: accounts === null || accounts === undefined ? `all:${all}` : String(accounts) };
}

interface StampReader {
  /** The stamp read directly, or undefined while a transaction is open on the connection. */
  direct(): ChangeStamp | undefined;
  /** The same statement queued behind Kysely's other statements (after an open transaction ends). */
  queued: CompiledQuery<{ stamp: string; accounts: unknown }>;
  /** PostgreSQL: every read is a round trip (cache/stamp.ts shares them between concurrent readers). */
  roundTrip: boolean;
}

const readers = new WeakMap<Kysely<Database>, StampReader>();
/** Handles whose stamp can be read synchronously (SQLite), outside transactions. */
const directReaders = new WeakSet<Kysely<Database>>();

/** Registers the connection behind a SQLite Kysely handle (store/database.ts does, on opening). */
export function registerSqliteStamp(db: Kysely<Database>, connection: BetterSqlite3.Database): void {
  // Statements instead of STAMP_SQL's one: `PRAGMA data_version` direct is cheaper than going through the
  // pragma_data_version table-valued function, and total_changes() reads no table. The account
  // generation does read one (a read transaction of its own, ~2 µs), so it is read only when the rest
  // moved: while `data_version:total_changes` is unchanged nothing committed, so the generation read
  // with it last is still the one. Nothing else runs on this connection during these synchronous calls.
  // Prepared on first use: the generation table exists only once the migrations ran, after this call.
  let statements: {
    dataVersion: BetterSqlite3.Statement;
    totalChanges: BetterSqlite3.Statement;
    accounts: BetterSqlite3.Statement;
  } | null = null;
  let last: ChangeStamp | undefined;
  directReaders.add(db);
  readers.set(db, {
    // Outside a transaction every change this connection made is committed, so reading the stamp
    // directly (not queued behind Kysely's lock) cannot see a change that may still roll back.
    // Anything unexpected (e.g. the connection busy with an open iterator) takes the queued path.
    direct: () => {
      if (connection.inTransaction) return undefined;
      try {
        statements ??= {
          dataVersion: connection.prepare('PRAGMA data_version').pluck(),
          totalChanges: connection.prepare('SELECT total_changes()').pluck(),
          accounts: connection.prepare(`SELECT ${ACCOUNTS_SQL}`).pluck(),
        };
        const all = `${statements.dataVersion.get() as number}:${statements.totalChanges.get() as number}`;
        if (last?.all !== all) last = stampOf(all, statements.accounts.get());
        return last;
      } catch {
        return undefined;
      }
    },
    queued: sql<{ stamp: string; accounts: unknown }>`${sql.raw(STAMP_SQL)}`.compile(db),
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
  const queued = sql<{
    stamp: string;
    accounts: unknown;
  }>`SELECT pg_current_snapshot()::text AS stamp, ${sql.raw(ACCOUNTS_SQL)} AS accounts`.compile(db);
  readers.set(db, { direct: () => undefined, queued, roundTrip: true });
}

/** The change stamp of a handle opened by openDatabase; undefined for any other handle. */
export async function readChangeStamp(db: Kysely<Database>): Promise<ChangeStamp | undefined> {
  const reader = readers.get(db);
  if (!reader) return undefined;
  const stamp = reader.direct();
  if (stamp !== undefined) return stamp;
  const { rows } = await db.executeQuery(reader.queued);
  return stampOf(rows[0]!.stamp, rows[0]!.accounts);
}

/**
 * The change stamp read synchronously, when it can be (SQLite outside a transaction); undefined otherwise
 * (PostgreSQL, an open transaction, any other handle). Same value readChangeStamp reads.
 */
export function readChangeStampNow(db: Kysely<Database>): ChangeStamp | undefined {
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
