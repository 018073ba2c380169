/** `/ui/jobs/:id`: one job, its estimate against what it took, its timeline, and cancelling it. */

import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, errorText, type Job, must } from '../api/client';
import { Snapshot } from '../components/camera';
import { ConfirmButton } from '../components/confirm';
import { JobStatusBadge, jobStatusLabel } from '../components/job-status';
import { bytes, duration, secondsBetween, when } from '../format';
import { jobs, putJob } from '../live/farm';
import { useTitle } from '../title';

const FINAL = ['completed', 'failed', 'cancelled'];

interface Step {
  at: string;
  what: string;
}

/** The job's life as the record tells it: accepted, queued, handed to its machine, and how it ended. */
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

export function JobPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const [error, setError] = useState<string | null>(null);
  const job = jobs.value.get(id);
  useTitle(job ? `Job ${job.job_name}` : 'Job');

  useEffect(() => {
    must(api.GET('/jobs/{id}', { params: { path: { id } } })).then(putJob, (e) => setError(errorText(e)));
  }, [id]);

  const cancel = async () => {
    try {
      putJob(await must(api.POST('/jobs/{id}/cancel', { params: { path: { id } } })));
    } catch (e) {
      setError(errorText(e));
    }
  };

  if (!job) {
    return (
      <section>
        <h1>Job</h1>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : (
          <p aria-busy="true">Loading…</p>
        )}
      </section>
    );
  }
  const took = secondsBetween(job.dispatched_at ?? job.created_at, job.finished_at);
  const requeue = async () => {
    try {
      putJob(await must(api.POST('/jobs/{id}/requeue', { params: { path: { id } } })));
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <section aria-labelledby="job-title">
      <h1 id="job-title">
        {job.job_name} <JobStatusBadge status={job.status} />
      </h1>
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
        <dd>
          {job.estimate?.filament_used_g != null
            ? `${job.estimate.filament_used_g.toFixed(1)} g`
            : job.estimate?.filament_used_mm != null
              ? `${(job.estimate.filament_used_mm / 1000).toFixed(2)} m`
              : '—'}
        </dd>
        {job.message && (
          <>
            <dt>Message</dt>
            <dd class="failure">{job.message}</dd>
          </>
        )}
      </dl>
      {FINAL.includes(job.status) && job.machine_id !== null && (
        <Snapshot
          key={job.status}
          path={`/jobs/${encodeURIComponent(job.id)}/photo`}
          alt={`The bed of ${job.machine_id} when “${job.job_name}” ended`}
          refreshMs={3000}
          untilShown
          quiet
          class="photo"
        />
      )}
      <h2>Timeline</h2>
      <ol class="timeline">
        {timeline(job).map((step) => (
          <li key={`${step.at}${step.what}`}>
            <time dateTime={step.at}>{when(step.at)}</time> {step.what}
          </li>
        ))}
      </ol>
      {!FINAL.includes(job.status) && (
        <div class="actions">
          <ConfirmButton
            label="Cancel job"
            class="danger"
            question={`Cancel “${job.job_name}”?`}
            detail="Its preparation stops, or the machine printing it stops; the job ends as cancelled."
            confirmLabel="Cancel job"
            onConfirm={cancel}
          />
        </div>
      )}
      {job.constraints !== null && (job.status === 'failed' || job.status === 'cancelled') && (
        <div class="actions">
          <button type="button" onClick={requeue}>
            Requeue
          </button>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
