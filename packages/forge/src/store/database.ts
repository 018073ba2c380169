import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import { registerPostgresStamp, registerSqliteStamp } from './change-stamp.js';
import type { DialectName } from './dialect.js';
import { initialMigration } from './migrations/001_initial.js';
import { postgresSearchMigration } from './migrations/002_postgres_search.js';
import { releaseListIndexMigration } from './migrations/003_release_list_index.js';
import { oauth2Migration } from './migrations/005_oauth2.js';
import { attachmentsMigration } from './migrations/006_attachments.js';
import { activityIndexesMigration } from './migrations/008_activity_indexes.js';
import { activityCountsMigration } from './migrations/009_activity_counts.js';
import { releaseCountsMigration } from './migrations/010_release_counts.js';
import { userSearchSuffixesMigration } from './migrations/011_user_search_suffixes.js';
import { activityGenerationsMigration } from './migrations/012_activity_generations.js';
import { webhooksMigration } from './migrations/013_webhooks.js';
import { accessTokenRepositoriesMigration } from './migrations/014_access_token_repositories.js';
import { refJournalMigration } from './migrations/015_ref_journal.js';
import { accountGenerationMigration } from './migrations/016_account_generation.js';
import { preparedStatementPool } from './prepared-pool.js';
import type { Database } from './schema.js';
import { withStatementCache } from './statement-cache.js';

export type { DialectName } from './dialect.js';

export interface ForgeDatabase {
  db: Kysely<Database>;
  dialect: DialectName;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://…` / `postgresql://…` for PostgreSQL; `sqlite:PATH`, `file:PATH` or a plain path for SQLite. */
  url: string;
  /** Run pending migrations before returning (default true). */
  migrate?: boolean;
  /** Called when an idle PostgreSQL connection fails (server restart, admin termination). */
  onConnectionError?: (error: Error) => void;
}

// int8 (bigint ids, unix timestamps, count(*)) arrives from pg as a string; every value we store fits in
// a double, so read it as a number like better-sqlite3 does.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/** Opens the forge database named by `url` and brings its schema up to date. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<ForgeDatabase> {
  const isPostgres = /^postgres(ql)?:\/\//.test(options.url);
  let forge: ForgeDatabase;
  if (isPostgres) {
    const pool = new pg.Pool({ connectionString: options.url, max: 10 });
    // Without a listener an idle client's error (e.g. the server restarting) would crash the process; the
    // pool drops that client and opens a new one on the next query.
    pool.on('error', (error) => {
      if (options.onConnectionError) options.onConnectionError(error);
      else process.stderr.write(`forge: idle database connection failed: ${error.message}\n`);
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedStatementPool(pool) }) });
    registerPostgresStamp(db);
    forge = { db, dialect: 'postgres', close: () => db.destroy() };
  } else {
    const path = options.url.replace(/^(sqlite|file):(\/\/)?/, '');
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new BetterSqlite3(path);
    // WAL lets `forge admin …` write while the server holds the database open; the busy timeout makes
    // the second writer wait instead of failing with SQLITE_BUSY.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 10000');
    sqlite.pragma('synchronous = NORMAL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    registerSqliteStamp(db, sqlite);
    forge = { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  if (options.migrate !== false) {
    try {
      await migrateToLatest(forge);
    } catch (error) {
      await forge.close();
      throw error;
    }
  }
  return forge;
}

/** Every migration in order; names sort lexically, so keep the numeric prefix. */
export function forgeMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '001_initial': initialMigration(dialect),
    '002_postgres_search': postgresSearchMigration(dialect),
    '003_release_list_index': releaseListIndexMigration(),
    '005_oauth2': oauth2Migration(dialect),
    '006_attachments': attachmentsMigration(dialect),
    '008_activity_indexes': activityIndexesMigration(),
    '009_activity_counts': activityCountsMigration(dialect),
    '010_release_counts': releaseCountsMigration(dialect),
    '011_user_search_suffixes': userSearchSuffixesMigration(dialect),
    '012_activity_generations': activityGenerationsMigration(dialect),
    '013_webhooks': webhooksMigration(dialect),
    '014_access_token_repositories': accessTokenRepositoriesMigration(),
    '015_ref_journal': refJournalMigration(dialect),
    '016_account_generation': accountGenerationMigration(dialect),
  };
}

/** Key of the PostgreSQL advisory lock held while a forge process migrates ("forge" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x666f726765;

/**
 * Applies pending migrations. On PostgreSQL several forge processes may start at once: each takes a
 * session advisory lock on one connection first, so exactly one migrates (creating Kysely's bookkeeping
 * tables and any extension included) and the others then find nothing left to do. SQLite serialises
 * writers itself (busy timeout) and Kysely's lock table covers the rest.
 */
export async function migrateToLatest(forge: ForgeDatabase): Promise<void> {
  if (forge.dialect !== 'postgres') return runMigrations(forge.db, forge.dialect);
  await forge.db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(connection);
    try {
      await runMigrations(connection, forge.dialect);
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(connection);
    }
  });
}

async function runMigrations(db: Kysely<Database>, dialect: DialectName): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => forgeMigrations(dialect) };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : error}`);
  }
}
