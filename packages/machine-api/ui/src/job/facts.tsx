/** What a job is: its machine (or its place in the queue), file, estimate against what it took, message. */

import type { Job } from '../api/client';
import { bytes, duration, secondsBetween } from '../format';

/** The slicer's filament estimate: grams when it knows them, else metres. */
function filamentEstimate(estimate: Job['estimate']): string {
  if (estimate?.filament_used_g != null) return `${estimate.filament_used_g.toFixed(1)} g`;
  if (estimate?.filament_used_mm != null) return `${(estimate.filament_used_mm / 1000).toFixed(2)} m`;
  return '—';
}

export function JobFacts({ job }: { job: Job }) {
  const took = secondsBetween(job.dispatched_at ?? job.created_at, job.finished_at);
  return (
    <dl class="facts wide">
      <dt>Machine</dt>
      <dd>
        {job.machine_id === null ? (
          'waiting in the queue'
        ) : (
          <a href={`/ui/machines/${encodeURIComponent(job.machine_id)}`}>{job.machine_id}</a>
        )}
      </dd>
      <dt>File</dt>
      <dd>
        {job.file_name} ({bytes(job.file_size)})
      </dd>
      <dt>Estimated print time</dt>
      <dd>{duration(job.estimate?.print_time_seconds)}</dd>
      {job.position !== null && (
        <>
          <dt>Place in the queue</dt>
          <dd>{job.position}</dd>
        </>
      )}
      <dt>Took (on the machine)</dt>
      <dd>{duration(took)}</dd>
      <dt>Filament</dt>
      <dd>{filamentEstimate(job.estimate)}</dd>
      {job.message && (
        <>
          <dt>Message</dt>
          <dd class="failure">{job.message}</dd>
        </>
      )}
    </dl>
  );
}
