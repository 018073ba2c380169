/**
 * `/ui/queue`: jobs waiting for a machine, in the order they will go (position 1 next), with their
 * constraints and the machines that could take them; change a priority, cancel one. Queue jobs that
 * ended failed or cancelled are listed below to be put back (requeue). Refreshed on `queue.changed`.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Job, must, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/confirm';
import { JobStatusBadge } from '../components/job-status';
import { when } from '../format';
import { jobs, putJob, queueVersion } from '../live/farm';
import { useTitle } from '../title';

type QueueEntry = Schemas['QueueEntry'];

/** "PETG, 0.4 mm nozzle, alpha or bravo" */
export function constraintsText(constraints: Job['constraints']): string {
  if (!constraints) return 'any machine';
  const parts: string[] = [];
  if (constraints.material) parts.push(constraints.material.toUpperCase().replace('_', ' '));
  if (constraints.nozzle_diameter) parts.push(`${constraints.nozzle_diameter} mm nozzle`);
  if (constraints.machine_type) parts.push(constraints.machine_type);
  if (constraints.machine_ids) parts.push(`one of ${constraints.machine_ids.join(', ')}`);
  return parts.join(', ') || 'any machine';
}

function PriorityForm({ job, onError }: { job: Job; onError: (message: string) => void }) {
  const [value, setValue] = useState(String(job.priority));
  useEffect(() => setValue(String(job.priority)), [job.priority]);
  return (
    <form
      class="inline"
      onSubmit={async (event) => {
        event.preventDefault();
        try {
          putJob(
            await must(
              api.PATCH('/jobs/{id}', {
                params: { path: { id: job.id } },
                body: { priority: Number(value) },
              }),
            ),
          );
        } catch (e) {
          onError(errorText(e));
        }
      }}
    >
      <label>
        <span class="visually-hidden">Priority of {job.job_name}</span>
        <input
          type="number"
          step={1}
          required
          value={value}
          onInput={(event) => setValue((event.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit">Set</button>
    </form>
  );
}

export function Queue() {
  useTitle('Queue');
  const [entries, setEntries] = useState<QueueEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const version = queueVersion.value;

  useEffect(() => {
    let current = true;
    must(api.GET('/queue')).then(
      (list) => current && setEntries(list),
      (e) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [version]);

  const act = async (call: Promise<{ data?: Job; error?: unknown; response: Response }>) => {
    setError(null);
    try {
      putJob(await must(call));
      queueVersion.value += 1;
    } catch (e) {
      setError(errorText(e));
    }
  };

  const ended = [...jobs.value.values()].filter(
    (job) => job.constraints !== null && (job.status === 'failed' || job.status === 'cancelled'),
  );

  return (
    <section aria-labelledby="queue-title">
      <h1 id="queue-title">Queue</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {entries === null && !error && <p aria-busy="true">Loading…</p>}
      {entries?.length === 0 && <p>Nothing is waiting.</p>}
      {entries && entries.length > 0 && (
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
              {entries.map(({ job, machines }) => (
                <tr key={job.id} data-job={job.id}>
                  <td>{job.position}</td>
                  <td>
                    <a href={`/ui/jobs/${job.id}`}>{job.job_name}</a>
                  </td>
                  <td>{constraintsText(job.constraints)}</td>
                  <td>{machines.length ? machines.join(', ') : 'none configured'}</td>
                  <td>
                    <PriorityForm job={job} onError={setError} />
                  </td>
                  <td>{when(job.queued_at)}</td>
                  <td>
                    <ConfirmButton
                      label="Cancel"
                      class="danger"
                      question={`Cancel “${job.job_name}”?`}
                      detail="It leaves the queue and ends as cancelled; it can be put back later."
                      confirmLabel="Cancel job"
                      onConfirm={() =>
                        act(api.POST('/jobs/{id}/cancel', { params: { path: { id: job.id } } }))
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {ended.length > 0 && (
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
      )}
    </section>
  );
}
