/** The inline form that changes a waiting job's priority (higher goes first). */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Job, must } from '../api/client';
import { putJob } from '../live/farm';

export function PriorityForm({ job, onError }: { job: Job; onError: (message: string) => void }) {
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
