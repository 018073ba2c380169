/** What became of a sent print: the upload's progress, the refusal, or where the job is now. */

import type { PrintUpload } from './use-print-upload';

export function PrintOutcome(props: { upload: PrintUpload }) {
  const { sent, error, accepted, queued } = props.upload;
  return (
    <>
      {sent !== null && (
        <label>
          Upload
          <progress max={1} value={sent} aria-valuetext={`${Math.round(sent * 100)} percent sent`} />
        </label>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {accepted && (
        <p class="notice" role="status">
          Accepted: <a href={`/ui/jobs/${accepted.job_id}`}>{accepted.parameters.job_name}</a> on{' '}
          {accepted.parameters.machine_id}.
        </p>
      )}
      {queued && (
        <p class="notice" role="status">
          Queued: <a href={`/ui/jobs/${queued.id}`}>{queued.job_name}</a>, position {queued.position}.
        </p>
      )}
    </>
  );
}
