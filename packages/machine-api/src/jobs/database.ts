/**
 * The job database: SQLite (better-sqlite3, WAL) under the data dir, accessed through Kysely, with
 * versioned migrations applied at start-up.
 */

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Generated, Kysely, type Migration, Migrator, SqliteDialect, sql } from 'kysely';
import { type AccessTables, accessMigration } from '../access/tables.js';
import { type NotifyTables, notifyMigration } from '../notify/tables.js';

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
  /** Where a queued job's design waits (kept for `requeue` after a failure); null otherwise. */
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

export interface JobDatabase extends NotifyTables, AccessTables {
  jobs: JobsTable;
  api_keys: ApiKeysTable;
  stored_files: StoredFilesTable;
  machine_beds: MachineBedsTable;
}

const migrations: Record<string, Migration> = {
  '001_jobs': {
    async up(db) {
      await db.schema
        .createTable('jobs')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('machine_id', 'text', (c) => c.notNull())
        .addColumn('job_name', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_size', 'integer', (c) => c.notNull())
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('message', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('jobs_machine').on('jobs').columns(['machine_id', 'seq']).execute();
      await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'seq']).execute();
    },
  },
  '002_job_estimate': {
    async up(db) {
      await db.schema.alterTable('jobs').addColumn('estimate', 'text').execute();
    },
  },
  // Queued jobs have no machine yet: the table is rebuilt (SQLite cannot drop NOT NULL in place), which
  // works the same on PostgreSQL. Beds awaiting a clear survive a restart.
  '002_queue': {
    async up(db) {
      await db.schema
        .createTable('jobs_next')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('machine_id', 'text')
        .addColumn('job_name', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_size', 'integer', (c) => c.notNull())
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('message', 'text')
        .addColumn('estimate', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('constraints', 'text')
        .addColumn('queued_at', 'text')
        .addColumn('dispatched_at', 'text')
        .addColumn('design_path', 'text')
        .execute();
      const copied = [
        'seq',
        'id',
        'machine_id',
        'job_name',
        'file_name',
        'file_size',
        'parameters',
        'status',
        'message',
        'estimate',
        'created_at',
        'updated_at',
        'finished_at',
      ] as const;
      await sql`insert into jobs_next (${sql.join(copied.map((c) => sql.ref(c)))}) select ${sql.join(
        copied.map((c) => sql.ref(c)),
      )} from jobs`.execute(db);
      await db.schema.dropTable('jobs').execute();
      await db.schema.alterTable('jobs_next').renameTo('jobs').execute();
      await db.schema.createIndex('jobs_machine').on('jobs').columns(['machine_id', 'seq']).execute();
      await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'seq']).execute();
      await db.schema
        .createIndex('jobs_queue')
        .on('jobs')
        .columns(['status', 'priority', 'queued_at'])
        .execute();
      await db.schema
        .createTable('machine_beds')
        .addColumn('machine_id', 'text', (c) => c.primaryKey())
        .addColumn('awaiting_clear_since', 'text', (c) => c.notNull())
        .addColumn('job_id', 'text')
        .execute();
    },
  },
  '005_access_and_stored_files': {
    async up(db) {
      await db.schema.alterTable('jobs').addColumn('owner', 'text').execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull().unique())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('stored_files')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('disk_name', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('owner', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '030_notifications': notifyMigration,
  '031_app_keys_and_camera_tokens': accessMigration,
  '033_filament': {
    async up(db) {
      await db.schema.alterTable('jobs').addColumn('filament', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('printing_at', 'text').execute();
      await db.schema.createIndex('jobs_finished').on('jobs').columns(['finished_at']).execute();
    },
  },
};

/** Opens (creating if needed) `<dataDir>/machine-api.sqlite` and brings its schema up to date. */
export async function openJobDatabase(dataDir: string): Promise<Kysely<JobDatabase>> {
  const sqlite = new Database(join(dataDir, 'machine-api.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  // WAL + NORMAL: a commit survives a crash of the process (not a power cut) without an fsync per
  // status change; a farm dispatching to many machines at once otherwise waits on the disk.
  sqlite.pragma('synchronous = NORMAL');
  const db = new Kysely<JobDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Migrations are numbered per feature by the people who write them, so a data dir may have run 005
    // before 003 exists; each migration touches its own tables, so running a late lower number is safe.
    allowUnorderedMigrations: true,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    throw error;
  }
  await sql`select 1`.execute(db);
  return db;
}
