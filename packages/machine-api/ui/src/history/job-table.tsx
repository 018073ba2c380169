/** The history's jobs, most recent first: how long each took against the slicer's estimate, and why it failed. */

import type { Job } from '../api/client';
import { JobStatusBadge } from '../components/job-status';
import { duration, filamentText, secondsBetween, when } from '../format';

export function JobTable({ rows }: { rows: Job[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Jobs, most recent first</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Machine</th>
            <th scope="col">Status</th>
            <th scope="col">Accepted</th>
            <th scope="col">Took</th>
            <th scope="col">Estimate</th>
            <th scope="col">Filament</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((job) => (
            <tr key={job.id} data-job={job.id}>
              <td>
                <a href={`/ui/jobs/${job.id}`}>{job.job_name}</a>
              </td>
              <td>{job.machine_id ?? '—'}</td>
              <td>
                <JobStatusBadge status={job.status} />
              </td>
              <td>{when(job.created_at)}</td>
              <td>{duration(secondsBetween(job.dispatched_at ?? job.created_at, job.finished_at))}</td>
              <td>{duration(job.estimate?.print_time_seconds)}</td>
              <td>{filamentText(job.filament)}</td>
              <td class="message">{job.message ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
