/**
 * The history page's jobs: read from the API with the page's filters (so the newest 1 000 of a day are found
 * however long the history), each shown as its newest record when the live stream has a newer one.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Job, type JobStatus, must } from '../api/client';
import { jobs as liveJobs } from '../live/farm';

export interface HistoryFilter {
  machineId: string;
  status: JobStatus | '';
  /** RFC 3339 instants, or null for no bound. */
  start: string | null;
  end: string | null;
}

/** Midnight at the start (or end) of a `yyyy-mm-dd` day, local time, as the API's RFC 3339 instant. */
export function dayBound(day: string, end: boolean): string | null {
  if (!day) return null;
  const at = new Date(`${day}T00:00:00`);
  if (Number.isNaN(at.getTime())) return null;
  if (end) at.setDate(at.getDate() + 1);
  return at.toISOString();
}

export function useJobHistory({ machineId, status, start, end }: HistoryFilter) {
  const [list, setList] = useState<Job[] | null>(null);
  const [error, setError] = useState<string | null>(null);

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

  return { loaded: list !== null, rows, error };
}
