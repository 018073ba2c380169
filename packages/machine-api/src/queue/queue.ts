/**
 * The farm queue: jobs that name constraints instead of a machine, and wait until a matching machine is
 * ready. What it promises:
 *
 * - Submission checks the design once and refuses (`BadRequest`/`InvalidDesign`, 400) a job no configured
 *   machine could ever take: nothing waits forever.
 * - Dispatch: whenever a machine is `ready` (idle, bed confirmed clear, no job on its way), the waiting job
 *   with the highest priority, oldest first within a priority, that this machine can take goes to it; at
 *   most one job per machine. The job is sliced then, with that machine's profile.
 * - A job that fails on its machine stays failed (no silent retry elsewhere); `requeue` puts it back.
 * - Waiting jobs and their designs are in the database and the data dir: they survive a restart. The
 *   claim of a job for a machine is one conditional UPDATE, so instances sharing one PostgreSQL queue
 *   (each owning its machines) never hand one job out twice.
 */

import type { Actor } from '../access/scopes.js';
import type { Job, QueueConstraints } from '../jobs/job.js';
import type { Upload } from '../jobs/runner.js';

export interface QueueSubmission {
  jobName: string;
  constraints: QueueConstraints;
  /** Higher first; default 0. */
  priority: number;
  slicerConfiguration?: { filament_idx?: number | null } | null;
}

export interface QueuedJobView {
  job: Job;
  /** 1 = next; null when the job no longer waits. */
  position: number | null;
  /** Configured machines the job can go to. */
  machines: string[];
  /** Machines among those the job waits for a spool change on, and why (queue/routing.ts, the spool rule). */
  held: { machineId: string; reason: string }[];
}

export interface QueueChange {
  reason: 'queued' | 'dispatched' | 'returned' | 'cancelled' | 'changed' | 'requeued';
  jobId: string;
  machineId: string | null;
  /** Jobs waiting after the change. */
  depth: number;
}

export interface FarmQueue {
  /**
   * Puts a design in the queue (the one entry point for every way of queueing: `POST /queue`, stored
   * files, OctoPrint uploads); `owner` is the submitting key's name. Throws `BadRequest`/`InvalidDesign`
   * when no machine could ever take it (the upload's file then stays the caller's to remove).
   */
  submit(upload: Upload, submission: QueueSubmission, owner?: string | null): Promise<Job>;
  /** Waiting jobs in dispatch order. */
  list(): Promise<readonly QueuedJobView[]>;
  /** The job's place in the queue (1 = next), or null when it does not wait. */
  positionOf(jobId: string): number | null;
  /**
   * Changes priority and/or constraints of a waiting job (`Conflict` when it no longer waits). This and
   * the two below: `actor` must own the job or hold `control` (`MissingScope` otherwise).
   */
  change(
    jobId: string,
    change: { priority?: number; constraints?: QueueConstraints },
    actor?: Actor,
  ): Promise<Job>;
  /** Cancels a job: a waiting one leaves the queue, a running one is stopped by the runner. */
  cancel(jobId: string, actor?: Actor): Promise<Job>;
  /** Puts a failed or cancelled queue job back in the queue. */
  requeue(jobId: string, actor?: Actor): Promise<Job>;
  /** Calls `listener` for every change of the queue; returns the unsubscribe function. */
  onChange(listener: (change: QueueChange) => void): () => void;
}
