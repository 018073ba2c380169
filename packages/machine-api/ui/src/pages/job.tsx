/**
 * `/ui/jobs/:id`: one job, its estimate against what it took, its timeline, and cancelling it.
 * The parts are in ../job/.
 */

import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, errorText, must } from '../api/client';
import { Snapshot } from '../components/camera';
import { ConfirmButton } from '../components/confirm';
import { JobStatusBadge } from '../components/job-status';
import { JobFacts } from '../job/facts';
import { Timeline } from '../job/timeline';
import { jobs, putJob } from '../live/farm';
import { useTitle } from '../title';

const FINAL = ['completed', 'failed', 'cancelled'];

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
      <JobFacts job={job} />
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
      <Timeline job={job} />
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
