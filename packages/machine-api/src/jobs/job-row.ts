/** A jobs table row as the service's Job: the one place that knows how the columns encode a job. */

import type { Selectable } from 'kysely';
import type { SliceEstimate } from '../slicer/slicer.js';
import type { JobsTable } from './database.js';
import type { JobFilament } from './filament.js';
import type { Job, JobParameters, JobStatus, QueueConstraints } from './job.js';

export function toJob(row: Selectable<JobsTable>): Job {
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
    owner: row.owner,
    priority: row.priority,
    constraints: row.constraints === null ? null : (JSON.parse(row.constraints) as QueueConstraints),
    queuedAt: row.queued_at,
    dispatchedAt: row.dispatched_at,
    designKept: row.design_path !== null,
    filament: row.filament === null ? null : (JSON.parse(row.filament) as JobFilament),
    printingAt: row.printing_at,
  };
}
