/**
 * `/ui/history`: jobs, most recent first, filtered by machine, status and date (all by the API, so the
 * newest 1 000 of a day are found however long the history): duration, the slicer's estimate against
 * what it took, and why a job failed.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Job, type JobStatus, must } from '../api/client';
import { JOB_STATUSES, JobStatusBadge, jobStatusLabel } from '../components/job-status';
import { Usage } from '../components/usage';
import { duration, filamentText, secondsBetween, when } from '../format';
import { jobs as liveJobs, machines } from '../live/farm';
import { useTitle } from '../title';

/** Midnight at the start (or end) of a `yyyy-mm-dd` day, local time, as the API's RFC 3339 instant. */
function dayBound(day: string, end: boolean): string | null {
  if (!day) return null;
  const at = new Date(`${day}T00:00:00`);
  if (Number.isNaN(at.getTime())) return null;
  if (end) at.setDate(at.getDate() + 1);
  return at.toISOString();
}

export function History() {
  useTitle('History');
  const [machineId, setMachineId] = useState('');
  const [status, setStatus] = useState<JobStatus | ''>('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [list, setList] = useState<Job[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const start = dayBound(from, false);
  const end = dayBound(to, true);
  useEffect(() => {
    let current = true;
    const query = {
      limit: 1000,
      ...(machineId ? { machine_id: machineId } : {}),
      ...(status ? { status } : {}),
      ...(start ? { created_after: start } : {}),
      ...(end ? { created_before: end } : {}),
    };
    must(api.GET('/jobs', { params: { query } })).then(
      (answer) => {
        if (!current) return;
        setList(answer);
        setError(null);
      },
      (e) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [machineId, status, start, end]);

  // Jobs that changed since the list was read show their newest record.
  const live = liveJobs.value;
  const rows = (list ?? [])
    .map((job) => {
      const newer = live.get(job.id);
      return newer && newer.updated_at >= job.updated_at ? newer : job;
    })
    .filter((job) => (status ? job.status === status : true));

  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Machine
          <select
            value={machineId}
            onChange={(event) => setMachineId((event.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">All machines</option>
            {machines.value.map((machine) => (
              <option key={machine.id} value={machine.id}>
                {machine.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select
            value={status}
            onChange={(event) =>
              setStatus((event.currentTarget as HTMLSelectElement).value as JobStatus | '')
            }
          >
            <option value="">Any status</option>
            {JOB_STATUSES.map((value) => (
              <option key={value} value={value}>
                {jobStatusLabel(value)}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input
            type="date"
            value={from}
            onInput={(event) => setFrom((event.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={to}
            onInput={(event) => setTo((event.currentTarget as HTMLInputElement).value)}
          />
        </label>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <Usage
        label="Totals of the jobs finished in this window"
        {...(machineId ? { machineId } : {})}
        from={start}
        to={end}
      />
      {list === null && !error && <p aria-busy="true">Loading jobs…</p>}
      {list !== null && rows.length === 0 && <p>No jobs match.</p>}
      {rows.length > 0 && (
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
      )}
    </section>
  );
}
