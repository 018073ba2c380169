/** Job records: the only module that reads or writes the jobs table. */

import type { Kysely } from 'kysely';
import type { SliceEstimate } from '../slicer/slicer.js';
import { changeStampReader } from './change-stamp.js';
import type { JobDatabase } from './database.js';
import type { JobFilament } from './filament.js';
import {
  FINAL_STATUSES,
  type Job,
  type JobParameters,
  type JobStatus,
  type QueueConstraints,
} from './job.js';
import { toJob } from './job-row.js';
import { DESIGN_IN_DATABASE } from './kept-designs.js';

export interface NewJob {
  id: string;
  /** Null for a job entering the queue. */
  machineId: string | null;
  jobName: string;
  fileName: string;
  fileSize: number;
  parameters: JobParameters;
  owner?: string | null;
  /** Set for a job entering the queue (its design is kept in the database, kept-designs.ts). */
  queue?: { priority: number; constraints: QueueConstraints };
  /** What the uploaded file says about its filament, when it says something. */
  filament?: JobFilament | null;
}

export interface JobFilter {
  machineId?: string;
  status?: JobStatus;
  /** ISO 8601 UTC (`toISOString`), so it compares as text with `created_at`: at or after. */
  createdAfter?: string;
  /** Same form: strictly before. */
  createdBefore?: string;
  limit: number;
}

/**
 * Queue jobs claimed for a machine but not yet handed to it: still `queued` with a machine, or `slicing`
 * (the machine has nothing yet). Such a job may go back to the queue when its instance stopped.
 */
const CLAIMED_NOT_HANDED: readonly JobStatus[] = ['queued', 'slicing'];

/** What a fenced transition of a claimed queue job requires (see `advanceClaimed`). */
const FENCED_FROM: Partial<Record<JobStatus, JobStatus>> = { slicing: 'queued', uploading: 'slicing' };

export class JobStore {
  constructor(
    private readonly db: Kysely<JobDatabase>,
    /** PostgreSQL claims lock the row they take (`FOR UPDATE SKIP LOCKED`); SQLite has one writer. */
    private readonly dialect: 'sqlite' | 'postgres' = 'sqlite',
  ) {}

  /**
   * The database's change stamp (change-stamp.ts): what a cache of job rows is kept under. Read first,
   * before the rows; synchronously on SQLite, one shared round trip on PostgreSQL. Undefined for a
   * database without one (then nothing may be answered from a cache).
   */
  async changeStamp(): Promise<string | undefined> {
    const reader = changeStampReader(this.db);
    return reader ? (reader.now() ?? (await reader.read())) : undefined;
  }

  /** Records a new job as `queued` (with `queue`, as a job waiting in the farm queue). */
  async insert(job: NewJob): Promise<Job> {
    const now = new Date().toISOString();
    const row = await this.db
      .insertInto('jobs')
      .values({
        id: job.id,
        machine_id: job.machineId,
        job_name: job.jobName,
        file_name: job.fileName,
        file_size: job.fileSize,
        parameters: JSON.stringify(job.parameters),
        status: 'queued',
        message: null,
        estimate: null,
        created_at: now,
        updated_at: now,
        finished_at: null,
        owner: job.owner ?? null,
        priority: job.queue?.priority ?? 0,
        constraints: job.queue ? JSON.stringify(job.queue.constraints) : null,
        queued_at: job.queue ? now : null,
        dispatched_at: null,
        design_path: job.queue ? DESIGN_IN_DATABASE : null,
        filament: job.filament ? JSON.stringify(job.filament) : null,
        printing_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toJob(row);
  }

  /** Removes a job that was refused before it started (the request was answered 4xx, so it never existed). */
  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('jobs').where('id', '=', id).execute();
  }

  /** Moves a job to `status`; a final status also stamps `finished_at`. */
  async setStatus(id: string, status: JobStatus, message: string | null = null): Promise<Job> {
    const now = new Date().toISOString();
    const row = await this.db
      .updateTable('jobs')
      .set({
        status,
        message,
        updated_at: now,
        finished_at: FINAL_STATUSES.includes(status) ? now : null,
        ...(status === 'printing' ? { printing_at: now } : {}),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toJob(row);
  }

  /** Keeps the slicer's estimate on the job. */
  async setEstimate(id: string, estimate: SliceEstimate): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ estimate: JSON.stringify(estimate) })
      .where('id', '=', id)
      .execute();
  }

  /** Keeps the job's filament figures (the estimate at submission, the used amounts at its end). */
  async setFilament(id: string, filament: JobFilament): Promise<Job | undefined> {
    const row = await this.db
      .updateTable('jobs')
      .set({ filament: JSON.stringify(filament) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  async get(id: string): Promise<Job | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /**
   * Jobs that reached a machine and finished at or after `from` and before `to` (ISO 8601 UTC, as
   * `finished_at` is stored, so they compare as text), oldest first.
   */
  async finishedBetween(from: string | undefined, to: string | undefined): Promise<Job[]> {
    let query = this.db
      .selectFrom('jobs')
      .selectAll()
      .where('finished_at', 'is not', null)
      .where('machine_id', 'is not', null);
    if (from !== undefined) query = query.where('finished_at', '>=', from);
    if (to !== undefined) query = query.where('finished_at', '<', to);
    const rows = await query.orderBy('finished_at').execute();
    return rows.map(toJob);
  }

  /** Most recent first. */
  async list(filter: JobFilter): Promise<Job[]> {
    let query = this.db.selectFrom('jobs').selectAll();
    if (filter.machineId !== undefined) query = query.where('machine_id', '=', filter.machineId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.createdAfter !== undefined) query = query.where('created_at', '>=', filter.createdAfter);
    if (filter.createdBefore !== undefined) query = query.where('created_at', '<', filter.createdBefore);
    const rows = await query.orderBy('seq', 'desc').limit(filter.limit).execute();
    return rows.map(toJob);
  }

  /** Jobs waiting in the queue: highest priority first, then oldest in the queue, then oldest. */
  async waiting(): Promise<Job[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'queued')
      .where('machine_id', 'is', null)
      .orderBy('priority', 'desc')
      .orderBy('queued_at', 'asc')
      .orderBy('seq', 'asc')
      .execute();
    return rows.map(toJob);
  }

  /**
   * Hands a waiting job to a machine, atomically: only one caller (of any instance sharing the database)
   * gets it. Returns undefined when the job is no longer waiting.
   */
  async claim(id: string, machineId: string): Promise<Job | undefined> {
    const now = new Date().toISOString();
    const row = await this.db
      .updateTable('jobs')
      .set({ machine_id: machineId, dispatched_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where('machine_id', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /**
   * Claims for `machineId` the first of `candidateIds` (jobs it can take, as read before) that still
   * waits, in queue order, in one transaction: on PostgreSQL the row is locked with `FOR UPDATE SKIP
   * LOCKED`, so instances claiming at once each take a different job instead of waiting on each other;
   * on SQLite (one writer) the conditional update of `claim` decides. Undefined when none waits any more.
   */
  async claimFirst(candidateIds: readonly string[], machineId: string): Promise<Job | undefined> {
    if (candidateIds.length === 0) return undefined;
    if (this.dialect === 'sqlite') {
      for (const id of candidateIds) {
        const claimed = await this.claim(id, machineId);
        if (claimed) return claimed;
      }
      return undefined;
    }
    return this.db.transaction().execute(async (tx) => {
      const first = await tx
        .selectFrom('jobs')
        .select('id')
        .where('id', 'in', [...candidateIds])
        .where('status', '=', 'queued')
        .where('machine_id', 'is', null)
        .orderBy('priority', 'desc')
        .orderBy('queued_at', 'asc')
        .orderBy('seq', 'asc')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!first) return undefined;
      const now = new Date().toISOString();
      const row = await tx
        .updateTable('jobs')
        .set({ machine_id: machineId, dispatched_at: now, updated_at: now })
        .where('id', '=', first.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toJob(row);
    });
  }

  /**
   * The fenced steps of a claimed queue job (`slicing` from `queued`, `uploading` from `slicing`): taken
   * only while the job is still claimed for `machineId` in the step before. Undefined when it is not: the
   * job went back to the queue meanwhile (its instance was taken for dead), so the caller must drop it,
   * never print it. A printer gets a file only after `uploading` is recorded, so a job is printed once.
   */
  async advanceClaimed(id: string, machineId: string, status: JobStatus): Promise<Job | undefined> {
    const from = FENCED_FROM[status];
    if (!from) throw new Error(`no fenced step to ${status}`);
    const row = await this.db
      .updateTable('jobs')
      .set({ status, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('machine_id', '=', machineId)
      .where('status', '=', from)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** Puts a claimed job back in the queue at its place (its machine turned out not to be ready). */
  async unclaim(id: string): Promise<Job> {
    const row = await this.db
      .updateTable('jobs')
      .set({ machine_id: null, dispatched_at: null, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returningAll()
      .executeTakeFirstOrThrow();
    return toJob(row);
  }

  /** Changes the priority and/or constraints of a job still waiting; undefined when it no longer waits. */
  async reprioritise(
    id: string,
    change: { priority?: number; constraints?: QueueConstraints },
  ): Promise<Job | undefined> {
    const row = await this.db
      .updateTable('jobs')
      .set({
        ...(change.priority !== undefined ? { priority: change.priority } : {}),
        ...(change.constraints !== undefined ? { constraints: JSON.stringify(change.constraints) } : {}),
        updated_at: new Date().toISOString(),
      })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where('machine_id', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** Cancels a job still waiting in the queue; undefined when it no longer waits. */
  async cancelWaiting(id: string, message: string): Promise<Job | undefined> {
    const now = new Date().toISOString();
    const row = await this.db
      .updateTable('jobs')
      .set({ status: 'cancelled', message, updated_at: now, finished_at: now })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where('machine_id', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** Puts a failed or cancelled queue job back at the end of its priority; undefined when not allowed. */
  async requeue(id: string): Promise<Job | undefined> {
    const now = new Date().toISOString();
    const row = await this.db
      .updateTable('jobs')
      .set({
        status: 'queued',
        machine_id: null,
        message: null,
        estimate: null,
        finished_at: null,
        printing_at: null,
        dispatched_at: null,
        queued_at: now,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('status', 'in', ['failed', 'cancelled'])
      .where('design_path', 'is not', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** Forgets where a job's design was kept (the file is gone). */
  async dropDesign(id: string): Promise<void> {
    await this.db.updateTable('jobs').set({ design_path: null }).where('id', '=', id).execute();
  }

  /** Keeps (or replaces) the message of a job that has not finished, e.g. "machine silent since …". */
  async setMessage(id: string, message: string | null): Promise<Job | undefined> {
    const row = await this.db
      .updateTable('jobs')
      .set({ message, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .where('status', 'not in', [...FINAL_STATUSES])
      .returningAll()
      .executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /**
   * Puts back in the queue the queue jobs claimed for these machines but not yet handed to them (still
   * `queued` with a machine, or `slicing`): their instance stopped (a restart, or found dead by another
   * instance) between the claim and the upload, so nothing reached the printer, and the job waits at its
   * place again. One statement: run by several instances at once, each job goes back once. Returns them.
   */
  async returnClaimed(machineIds: readonly string[]): Promise<Job[]> {
    if (machineIds.length === 0) return [];
    const rows = await this.db
      .updateTable('jobs')
      .set({
        status: 'queued',
        machine_id: null,
        dispatched_at: null,
        message: null,
        estimate: null,
        updated_at: new Date().toISOString(),
      })
      .where('status', 'in', [...CLAIMED_NOT_HANDED])
      .where('queued_at', 'is not', null)
      .where('machine_id', 'in', [...machineIds])
      .returningAll()
      .execute();
    return rows.map(toJob);
  }

  /** The jobs recorded as printing on these machines. */
  async printingOn(machineIds: readonly string[]): Promise<Job[]> {
    if (machineIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'printing')
      .where('machine_id', 'in', [...machineIds])
      .execute();
    return rows.map(toJob);
  }

  /**
   * Marks every job that was in flight as failed (the service stopped while it ran); jobs still waiting in
   * the queue stay queued. Returns the failed jobs with the status they had.
   */
  async failUnfinished(
    machineIds: readonly string[],
    /** Jobs left as they are (printing on a printer that carries on by itself: followed again). */
    except: (job: Job) => boolean = () => false,
  ): Promise<{ job: Job; was: JobStatus }[]> {
    // Only this instance's machines: on a shared database the other instances' jobs are theirs to judge.
    if (machineIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', 'not in', [...FINAL_STATUSES])
      .where('machine_id', 'in', [...machineIds])
      .execute();
    const unfinished = rows.filter((row) => !except(toJob(row)));
    const failed: { job: Job; was: JobStatus }[] = [];
    for (const row of unfinished) {
      const job = await this.setStatus(
        row.id,
        'failed',
        `machine-api stopped while the job was ${row.status}; what the machine did afterwards is unknown`,
      );
      failed.push({ job, was: row.status as JobStatus });
    }
    return failed;
  }
}
