/** The history page's filters: machine, status, and the first and last day (local dates). */

import type { JobStatus } from '../api/client';
import { JOB_STATUSES, jobStatusLabel } from '../components/job-status';
import { machines } from '../live/farm';

export interface FilterFields {
  machineId: string;
  status: JobStatus | '';
  from: string;
  to: string;
}

export function HistoryFilters({
  fields,
  onChange,
}: {
  fields: FilterFields;
  onChange: (change: Partial<FilterFields>) => void;
}) {
  const text = (event: Event) => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value;
  return (
    <form class="filters" onSubmit={(event) => event.preventDefault()}>
      <label>
        Machine
        <select value={fields.machineId} onChange={(event) => onChange({ machineId: text(event) })}>
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
          value={fields.status}
          onChange={(event) => onChange({ status: text(event) as JobStatus | '' })}
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
        <input type="date" value={fields.from} onInput={(event) => onChange({ from: text(event) })} />
      </label>
      <label>
        To
        <input type="date" value={fields.to} onInput={(event) => onChange({ to: text(event) })} />
      </label>
    </form>
  );
}
