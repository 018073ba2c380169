/**
 * `/ui/queue`: jobs waiting for a machine, in the order they will go (position 1 next), with their
 * constraints and the machines that could take them; change a priority, cancel one. Queue jobs that
 * ended failed or cancelled are listed below to be put back (requeue). Refreshed on `queue.changed`.
 * The parts are in ../queue/.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';
import { jobs, putJob, queueVersion } from '../live/farm';
import { EndedJobs } from '../queue/ended-jobs';
import { type JobCall, QueueTable } from '../queue/queue-table';
import { useTitle } from '../title';

type QueueEntry = Schemas['QueueEntry'];

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

  const act = async (call: JobCall) => {
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
      {entries && entries.length > 0 && <QueueTable entries={entries} act={act} onError={setError} />}
      {ended.length > 0 && <EndedJobs ended={ended} act={act} />}
    </section>
  );
}
