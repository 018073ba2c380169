/** A print job as the service records it. */

export const JOB_STATUSES = [
  'queued',
  'slicing',
  'uploading',
  'printing',
  'completed',
  'failed',
  'cancelled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses a job never leaves. */
export const FINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export function isFinal(status: JobStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

import type { SliceEstimate } from '../slicer/slicer.js';

export interface JobParameters {
  machine_id: string;
  job_name: string;
  slicer_configuration?: { filament_idx?: number | null } | null;
}

export interface Job {
  id: string;
  machineId: string;
  jobName: string;
  fileName: string;
  fileSize: number;
  /** The `PrintParameters` the job was submitted with, echoed by `POST /print`. */
  parameters: JobParameters;
  status: JobStatus;
  /** Why the job failed or was cancelled. */
  message: string | null;
  /** What the slicer estimated (print time, filament); null when not sliced. */
  estimate: SliceEstimate | null;
  /** ISO 8601 timestamps. */
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}
