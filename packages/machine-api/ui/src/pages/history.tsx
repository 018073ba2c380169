/**
 * `/ui/history`: jobs, most recent first, filtered by machine, status and date (all by the API, so the
 * newest 1 000 of a day are found however long the history): duration, the slicer's estimate against
 * what it took, and why a job failed. The parts are in ../history/.
 */

import { useState } from 'preact/hooks';
import { Usage } from '../components/usage';
import { type FilterFields, HistoryFilters } from '../history/filters';
import { JobTable } from '../history/job-table';
import { dayBound, useJobHistory } from '../history/use-job-history';
import { useTitle } from '../title';

export function History() {
  useTitle('History');
  const [fields, setFields] = useState<FilterFields>({ machineId: '', status: '', from: '', to: '' });
  const { machineId, status } = fields;
  const start = dayBound(fields.from, false);
  const end = dayBound(fields.to, true);
  const { loaded, rows, error } = useJobHistory({ machineId, status, start, end });

  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <HistoryFilters
        fields={fields}
        onChange={(change) => setFields((current) => ({ ...current, ...change }))}
      />
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
      {!loaded && !error && <p aria-busy="true">Loading jobs…</p>}
      {loaded && rows.length === 0 && <p>No jobs match.</p>}
      {rows.length > 0 && <JobTable rows={rows} />}
    </section>
  );
}
