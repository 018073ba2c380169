/**
 * The job database: SQLite (better-sqlite3, WAL) under the data dir, accessed through Kysely, with
 * versioned migrations applied at start-up.
 */

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Generated, Kysely, type Migration, Migrator, SqliteDialect, sql } from 'kysely';

export interface JobsTable {
  id: string;
  machine_id: string;
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
}

export interface JobDatabase {
  jobs: JobsTable;
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
};

/** Opens (creating if needed) `<dataDir>/machine-api.sqlite` and brings its schema up to date. */
export async function openJobDatabase(dataDir: string): Promise<Kysely<JobDatabase>> {
  const sqlite = new Database(join(dataDir, 'machine-api.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<JobDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    throw error;
  }
  await sql`select 1`.execute(db);
  return db;
}
