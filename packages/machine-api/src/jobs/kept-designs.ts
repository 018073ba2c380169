/**
 * The designs of queued jobs, kept in the jobs database (SQLite or PostgreSQL, one code path) so that
 * whichever instance of the farm dispatches a job can read its design, and the design outlives the
 * instance that accepted it. A design is stored as numbered chunks of at most CHUNK_BYTES, written while
 * the upload's file is read and read back one chunk at a time: neither side ever holds a whole design in
 * memory, and no statement moves more than one chunk.
 *
 * The chunks are written before the job row (a job is never visible without its design); a crash in
 * between leaves chunks no job names, which `dropOrphans` removes once they are older than any
 * submission could take.
 */

import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely, Migration } from 'kysely';
import { databaseNowMs } from '../farm/instances.js';
import type { JobDatabase } from './database.js';
import type { DialectName } from './migrations.js';

/** The largest chunk: a design of any size moves through memory one MiB at a time. */
export const CHUNK_BYTES = 1024 * 1024;

/** Chunks no job names are removed only when older than this (a submission under way writes them). */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

export interface QueueDesignChunksTable {
  job_id: string;
  /** 0, 1, 2, … in file order. */
  seq: number;
  data: Buffer;
  /** The database's clock when the chunk was written (orphan removal). */
  created_ms: number;
}

export interface KeptDesignTables {
  queue_design_chunks: QueueDesignChunksTable;
}

export function keptDesignsMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('queue_design_chunks')
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('created_ms', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('queue_design_chunks_pk', ['job_id', 'seq'])
        .execute();
    },
  };
}

export class KeptDesigns {
  constructor(
    private readonly db: Kysely<JobDatabase>,
    private readonly dialect: DialectName,
  ) {}

  /** Stores the file at `path` as the design of `jobId`, chunk by chunk; on failure nothing stays. */
  async keep(jobId: string, path: string): Promise<void> {
    let seq = 0;
    try {
      for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
        await this.db
          .insertInto('queue_design_chunks')
          .values({
            job_id: jobId,
            seq: seq++,
            data: chunk as Buffer,
            created_ms: databaseNowMs(this.dialect),
          })
          .execute();
      }
    } catch (error) {
      await this.drop(jobId);
      throw error;
    }
  }

  /** Whether a design is kept for the job (it has at least its first chunk). */
  async has(jobId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('queue_design_chunks')
      .select('seq')
      .where('job_id', '=', jobId)
      .where('seq', '=', 0)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The kept design as a stream, read one chunk per query (an empty stream when none is kept). */
  open(jobId: string): Readable {
    const { db } = this;
    return Readable.from(
      (async function* () {
        for (let seq = 0; ; seq++) {
          const row = await db
            .selectFrom('queue_design_chunks')
            .select('data')
            .where('job_id', '=', jobId)
            .where('seq', '=', seq)
            .executeTakeFirst();
          if (!row) return;
          yield row.data;
        }
      })(),
      { objectMode: false },
    );
  }

  /** Writes the kept design to `path`; throws when none is kept. */
  async copyTo(jobId: string, path: string): Promise<void> {
    if (!(await this.has(jobId))) {
      throw new Error(`the design of job ${jobId} is not kept in the database`);
    }
    await pipeline(this.open(jobId), createWriteStream(path));
  }

  async drop(jobId: string): Promise<void> {
    await this.db.deleteFrom('queue_design_chunks').where('job_id', '=', jobId).execute();
  }

  /** Removes chunks that no job names (a submission that crashed between chunks and row), once old enough. */
  async dropOrphans(): Promise<number> {
    const result = await this.db
      .deleteFrom('queue_design_chunks')
      .where(({ eb, not, exists, selectFrom }) =>
        eb.and([
          not(
            exists(
              selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'queue_design_chunks.job_id'),
            ),
          ),
          eb('created_ms', '<', eb(databaseNowMs(this.dialect), '-', ORPHAN_AGE_MS)),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Upgrade from the on-disk queue (designs under `<dataDir>/queue`, named by `jobs.design_path`): every
   * job whose design file is still on this host's disk gets it stored here, and the file goes (a file no
   * job names is an orphan and goes too). Returns the number moved.
   */
  async importFromDisk(queueDir: string): Promise<number> {
    const files = await readdir(queueDir).catch(() => [] as string[]);
    let moved = 0;
    for (const file of files) {
      const path = join(queueDir, file);
      const job = await this.db
        .selectFrom('jobs')
        .select('id')
        .where('design_path', '=', path)
        .executeTakeFirst();
      if (job) {
        await this.drop(job.id);
        await this.keep(job.id, path);
        await this.db
          .updateTable('jobs')
          .set({ design_path: DESIGN_IN_DATABASE })
          .where('id', '=', job.id)
          .execute();
        moved++;
      }
      await rm(path, { force: true });
    }
    await rm(queueDir, { recursive: true, force: true });
    return moved;
  }
}

/** `jobs.design_path` of a job whose design is kept in `queue_design_chunks`. */
export const DESIGN_IN_DATABASE = 'database';
