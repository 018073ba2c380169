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

import type { MachineType } from '../machines/machine.js';
import type { SliceEstimate } from '../slicer/slicer.js';
import type { JobFilament } from './filament.js';

/** What a job was submitted with: `POST /print`'s `PrintParameters`, or a queued job's (no machine yet). */
export interface JobParameters {
  machine_id?: string;
  job_name: string;
  slicer_configuration?: { filament_idx?: number | null } | null;
  /** For a queued job: what its design needs (kind, size), measured once at submission for routing. */
  design?: {
    kind: 'stl' | '3mf' | 'obj' | 'gcode';
    size: { width: number; depth: number; height: number } | null;
  };
}

/** Which machines a queued job may go to; every given constraint must hold. */
export interface QueueConstraints {
  /** Any of these machines. */
  machine_ids?: string[];
  /** A filament material type (`pla`, `petg`, …) the machine must have loaded. */
  material?: string;
  /** The machine's nozzle diameter, in mm. */
  nozzle_diameter?: number;
  machine_type?: MachineType;
}

export interface Job {
  id: string;
  /** The machine the job was sent to; null while a queued job waits for one. */
  machineId: string | null;
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
  /** Name of the API key that submitted the job; null when access control was off. */
  owner: string | null;
  /** Queue order, higher first (0 for `POST /print` jobs). */
  priority: number;
  /** The queue constraints; null for `POST /print` jobs. */
  constraints: QueueConstraints | null;
  /** When the job last entered the queue; null for `POST /print` jobs. */
  queuedAt: string | null;
  dispatchedAt: string | null;
  /**
   * Whether the job's design is kept (a queued job's, in the database, for its dispatch and a requeue);
   * false once removed and for `POST /print` jobs.
   */
  designKept: boolean;
  /** Filament estimated, used and its cost; null when nothing is known. */
  filament: JobFilament | null;
  /** When the machine started printing it. */
  printingAt: string | null;
}

/** A queued job still waiting for a machine. */
export function isWaiting(job: Job): boolean {
  return job.status === 'queued' && job.machineId === null;
}
