/**
 * The waiting jobs, next first: what each needs, which machines could take it (and those whose Spoolman
 * spool cannot finish it now, with the reason), its priority, cancel.
 */

import { api, type Job, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/confirm';
import { when } from '../format';
import { constraintsText } from './constraints';
import { PriorityForm } from './priority-form';

type QueueEntry = Schemas['QueueEntry'];
export type JobCall = Promise<{ data?: Job; error?: unknown; response: Response }>;

export function QueueTable({
  entries,
  act,
  onError,
}: {
  entries: QueueEntry[];
  act: (call: JobCall) => Promise<void>;
  onError: (message: string) => void;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Waiting jobs, next first</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Job</th>
            <th scope="col">Needs</th>
            <th scope="col">Can go to</th>
            <th scope="col">Priority</th>
            <th scope="col">Queued</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map(({ job, machines, held }) => (
            <tr key={job.id} data-job={job.id}>
              <td>{job.position}</td>
              <td>
                <a href={`/ui/jobs/${job.id}`}>{job.job_name}</a>
              </td>
              <td>{constraintsText(job.constraints)}</td>
              <td>
                {machines.length ? machines.join(', ') : 'none configured'}
                {held.length > 0 && (
                  <ul class="held" data-field="held">
                    {held.map(({ machine_id, reason }) => (
                      <li key={machine_id}>
                        not now on {machine_id}: {reason}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>
                <PriorityForm job={job} onError={onError} />
              </td>
              <td>{when(job.queued_at)}</td>
              <td>
                <ConfirmButton
                  label="Cancel"
                  class="danger"
                  question={`Cancel “${job.job_name}”?`}
                  detail="It leaves the queue and ends as cancelled; it can be put back later."
                  confirmLabel="Cancel job"
                  onConfirm={() => act(api.POST('/jobs/{id}/cancel', { params: { path: { id: job.id } } }))}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
