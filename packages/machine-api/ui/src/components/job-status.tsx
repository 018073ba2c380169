import type { JobStatus } from '../api/client';

const LABELS: Record<JobStatus, string> = {
  queued: 'Queued',
  slicing: 'Slicing',
  uploading: 'Uploading',
  printing: 'Printing',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

export const JOB_STATUSES = Object.keys(LABELS) as JobStatus[];

export function jobStatusLabel(status: JobStatus): string {
  return LABELS[status];
}

/** A job's status as a labelled chip (colour plus word). */
export function JobStatusBadge({ status }: { status: JobStatus }) {
  return <span class={`badge job-${status}`}>{LABELS[status]}</span>;
}
