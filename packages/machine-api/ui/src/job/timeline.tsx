/** A job's life as the record tells it: accepted, queued, handed to its machine, and how it ended. */

import type { Job } from '../api/client';
import { jobStatusLabel } from '../components/job-status';
import { when } from '../format';

interface Step {
  at: string;
  what: string;
}

function timeline(job: Job): Step[] {
  const steps: Step[] = [
    {
      at: job.created_at,
      what: job.constraints ? 'Accepted into the queue' : `Accepted for ${job.machine_id}`,
    },
  ];
  if (job.queued_at && job.queued_at !== job.created_at)
    steps.push({ at: job.queued_at, what: 'Queued again' });
  if (job.dispatched_at)
    steps.push({ at: job.dispatched_at, what: `Sent to ${job.machine_id ?? 'a machine'}` });
  if (job.finished_at) {
    steps.push({
      at: job.finished_at,
      what: `${jobStatusLabel(job.status)}${job.message ? `: ${job.message}` : ''}`,
    });
  } else if (job.updated_at !== job.created_at || job.status !== 'queued') {
    steps.push({ at: job.updated_at, what: jobStatusLabel(job.status) });
  }
  return steps;
}

export function Timeline({ job }: { job: Job }) {
  return (
    <>
      <h2>Timeline</h2>
      <ol class="timeline">
        {timeline(job).map((step) => (
          <li key={`${step.at}${step.what}`}>
            <time dateTime={step.at}>{when(step.at)}</time> {step.what}
          </li>
        ))}
      </ol>
    </>
  );
}
