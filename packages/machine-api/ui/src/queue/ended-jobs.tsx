/** Queue jobs that ended failed or cancelled without printing, each to be put back (requeue). */

import { api, type Job } from '../api/client';
import { JobStatusBadge } from '../components/job-status';
import type { JobCall } from './queue-table';

export function EndedJobs({ ended, act }: { ended: Job[]; act: (call: JobCall) => Promise<void> }) {
  return (
    <>
      <h2>Ended without printing</h2>
      <ul class="plain">
        {ended.map((job) => (
          <li key={job.id} data-job={job.id}>
            <a href={`/ui/jobs/${job.id}`}>{job.job_name}</a> <JobStatusBadge status={job.status} />{' '}
            {job.message}{' '}
            <button
              type="button"
              onClick={() => act(api.POST('/jobs/{id}/requeue', { params: { path: { id: job.id } } }))}
            >
              Requeue
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}
