/** Job records: the only module that reads or writes the jobs table. */

import type { Kysely, Selectable } from 'kysely';
import type { SliceEstimate } from '../slicer/slicer.js';
import type { JobDatabase, JobsTable } from './database.js';
import { FINAL_STATUSES, type Job, type JobParameters, type JobStatus } from './job.js';

export interface NewJob {
  id: string;
  machineId: string;
  jobName: string;
  fileName: string;
  fileSize: number;
  parameters: JobParameters;
}

export interface JobFilter {
  machineId?: string;
  status?: JobStatus;
  limit: number;
}

function toJob(row: Selectable<JobsTable>): Job {
  return {
    id: row.id,
    machineId: row.machine_id,
    jobName: row.job_name,
    fileName: row.file_name,
    fileSize: row.file_size,
    parameters: JSON.parse(row.parameters) as JobParameters,
    status: row.status as JobStatus,
    message: row.message,
    estimate: row.estimate === null ? null : (JSON.parse(row.estimate) as SliceEstimate),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

export class JobStore {
  constructor(private readonly db: Kysely<JobDatabase>) {}

  /** Records a new job as `queued`. */
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
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toJob(row);
  }

  /** Moves a job to `status`; a final status also stamps `finished_at`. */
  async setStatus(id: string, status: JobStatus, message: string | null = null): Promise<Job> {
    const now = new Date().toISOString();
    const row = await this.db
      .updateTable('jobs')
      .set({ status, message, updated_at: now, finished_at: FINAL_STATUSES.includes(status) ? now : null })
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

  async get(id: string): Promise<Job | undefined> {
    const row = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  /** Most recent first. */
  async list(filter: JobFilter): Promise<Job[]> {
    let query = this.db.selectFrom('jobs').selectAll();
    if (filter.machineId !== undefined) query = query.where('machine_id', '=', filter.machineId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    const rows = await query.orderBy('seq', 'desc').limit(filter.limit).execute();
    return rows.map(toJob);
  }

  /** Marks every job that was still in flight as failed (the service stopped while it ran). */
  async failUnfinished(): Promise<Job[]> {
    const unfinished = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', 'not in', [...FINAL_STATUSES])
      .execute();
    const failed: Job[] = [];
    for (const row of unfinished) {
      failed.push(
        await this.setStatus(
          row.id,
          'failed',
          `machine-api stopped while the job was ${row.status}; what the machine did afterwards is unknown`,
        ),
      );
    }
    return failed;
  }
}
