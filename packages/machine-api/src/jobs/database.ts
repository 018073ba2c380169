/**
 * The machine-api database: SQLite (better-sqlite3, WAL) under the data dir for one host, or PostgreSQL
 * for a farm of several instances (docs/machine-api/farm.md), through the same Kysely code, with the
 * versioned migrations of migrations.ts applied at start-up.
 */

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Generated, Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { AccessTables } from '../access/tables.js';
import type { EventTables } from '../events/tables.js';
import type { FarmTables } from '../farm/tables.js';
import type { NotifyTables } from '../notify/tables.js';
import type { SpoolmanTables } from '../spoolman/tables.js';
import { registerPostgresStamp, registerSqliteStamp } from './change-stamp.js';
import type { KeptDesignTables } from './kept-designs.js';
import { type DialectName, jobMigrations } from './migrations.js';

export type { DialectName } from './migrations.js';

export interface JobsTable {
  id: string;
  /** Null while a queued job waits for a machine. */
  machine_id: string | null;
  job_name: string;
  file_name: string;
  file_size: number;
  /** JSON of the submitted `PrintParameters`. */
  parameters: string;
  status: string;
  message: string | null;
  /** JSON of the slicer's `SliceEstimate`; null until sliced, and for G-code passed through. */
  estimate: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** Insertion order, to list jobs created in the same millisecond stably. */
  seq: Generated<number>;
  /** Name of the API key that submitted the job; null when access control was off. */
  owner: string | null;
  /** Queue order: higher first. */
  priority: Generated<number>;
  /** JSON of the queue constraints (`machine_ids`, `material`, …); null for `POST /print` jobs. */
  constraints: string | null;
  /** When the job (last) entered the queue; null for `POST /print` jobs. Oldest first within a priority. */
  queued_at: string | null;
  /** When the queue handed the job to its machine. */
  dispatched_at: string | null;
  /**
   * `database` while a queued job's design is kept in `queue_design_chunks` (kept-designs.ts; also for
   * `requeue` after a failure); null otherwise. Before designs moved to the database it was a file path
   * under `<dataDir>/queue`, which start-up imports.
   */
  design_path: string | null;
  /** JSON of the job's `JobFilament` (jobs/filament.ts); null when nothing is known. */
  filament: string | null;
  /** When the machine started printing the job (print hours in `GET /stats`). */
  printing_at: string | null;
}

/** One row per machine whose bed waits for a `POST /machines/{id}/clear` after a print. */
export interface MachineBedsTable {
  machine_id: string;
  awaiting_clear_since: string;
  /** The job whose print is on the bed, if the service ran it. */
  job_id: string | null;
}

/** API keys (src/access/): only the hash of each key's secret is kept. */
export interface ApiKeysTable {
  name: string;
  /** The public half of the key text, to find the row without comparing secrets. */
  key_id: string;
  /** SHA-256 of the secret half, hex. */
  secret_hash: string;
  /** Comma-separated scopes. */
  scopes: string;
  created_at: string;
}

/** Files a slicer uploaded without printing them, kept for a later `POST /files/{name}/print`. */
export interface StoredFilesTable {
  name: string;
  /** Where it prints: `machine:<id>` or `queue:<query string of constraints>`. */
  target: string;
  /** File name under `<dataDir>/files/` (random, never the client's name). */
  disk_name: string;
  size: number;
  owner: string | null;
  created_at: string;
}

export interface JobDatabase
  extends NotifyTables,
    AccessTables,
    FarmTables,
    KeptDesignTables,
    SpoolmanTables,
    EventTables {
  jobs: JobsTable;
  api_keys: ApiKeysTable;
  stored_files: StoredFilesTable;
  machine_beds: MachineBedsTable;
}

export interface OpenDatabaseOptions {
  /** Where the SQLite file lives when no `url` is given. */
  dataDir: string;
  /** `postgres://…` (or `postgresql://…`): the farm's shared database; absent: SQLite in `dataDir`. */
  url?: string;
}

export interface JobDatabaseHandle {
  db: Kysely<JobDatabase>;
  dialect: DialectName;
  close(): Promise<void>;
}

// int8 (bigint sizes, count(*)) arrives from pg as a string; every value stored fits in a double, so it is
// read as a number, as better-sqlite3 does.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/** Key of the PostgreSQL advisory lock held while an instance migrates ("mapi" in ASCII). */
const MIGRATION_LOCK_KEY = 0x6d617069;

/** True for a URL naming a PostgreSQL database. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/**
 * Opens the database (PostgreSQL when `url` names one, else `<dataDir>/machine-api.sqlite`, created if
 * needed) and brings its schema up to date.
 */
export async function openJobDatabase(options: OpenDatabaseOptions): Promise<JobDatabaseHandle> {
  const handle = options.url ? openPostgres(options.url) : openSqlite(options.dataDir);
  try {
    await migrate(handle);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

function openSqlite(dataDir: string): JobDatabaseHandle {
  const sqlite = new Database(join(dataDir, 'machine-api.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  // WAL + NORMAL: a commit survives a crash of the process (not a power cut) without an fsync per
  // status change; a farm dispatching to many machines at once otherwise waits on the disk.
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<JobDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
  registerSqliteStamp(db, sqlite);
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

function openPostgres(url: string): JobDatabaseHandle {
  if (!isPostgresUrl(url)) throw new Error(`database URL must start with postgres:// (got "${redact(url)}")`);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // Without a listener an idle client's error (the server restarting) would end the process; the pool
  // drops that client and opens a new one on the next query.
  pool.on('error', (error) =>
    process.stderr.write(`machine-api: idle database connection failed: ${error.message}\n`),
  );
  const db = new Kysely<JobDatabase>({ dialect: new PostgresDialect({ pool }) });
  registerPostgresStamp(db);
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * Applies pending migrations. On PostgreSQL several instances may start at once: each takes a session
 * advisory lock on one connection first, so one migrates and the others then find nothing left to do.
 */
async function migrate(handle: JobDatabaseHandle): Promise<void> {
  if (handle.dialect === 'sqlite') return runMigrations(handle.db, handle.dialect);
  await handle.db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(connection);
    try {
      await runMigrations(connection, handle.dialect);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(connection);
    }
  });
}

async function runMigrations(db: Kysely<JobDatabase>, dialect: DialectName): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => jobMigrations(dialect) },
    // Migrations are numbered per feature by the people who write them, so a data dir may have run 005
    // before 003 exists; each migration touches its own tables, so running a late lower number is safe.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
